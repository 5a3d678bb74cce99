// A program that imports the engine as a library, the way a user adds their
// own tools: TestLibraryUsersInheritNoTools holds its module graph to the
// engine's own requirements (the replace is made absolute in its copy).
module example.com/consumer

go 1.26.4

require github.com/brisvox/brisvox v0.0.0

replace github.com/brisvox/brisvox => ../../../../..
