package agentbuild

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/brisvox/brisvox/cmd/internal/agentfile"
)

// initialisms are the words Go spells in capitals in field names.
var initialisms = map[string]string{"url": "URL", "api": "API", "id": "ID", "pcm": "PCM", "vad": "VAD", "tts": "TTS", "stt": "STT"}

// fieldName is the Config field of a file option: base_url -> BaseURL.
func fieldName(option string) string {
	var b strings.Builder
	for _, part := range strings.Split(option, "_") {
		if up, ok := initialisms[part]; ok {
			b.WriteString(up)
			continue
		}
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// special maps an option that is not a plain field of the config (an enum
// type, a nested struct): the hook gets the whole config and sets it.
type special func(cfg reflect.Value, name string, o agentfile.Option) error

// fill sets the fields of the config cfg points to from the options.
func fill(cfg any, opts map[string]agentfile.Option, hooks map[string]special) error {
	v := reflect.ValueOf(cfg).Elem()
	for name, o := range opts {
		if h := hooks[name]; h != nil {
			if err := h(v, name, o); err != nil {
				return err
			}
			continue
		}
		f := v.FieldByName(fieldName(name))
		if !f.IsValid() || !f.CanSet() {
			return fmt.Errorf("%w: %s has no field %s in %s", ErrOption, name, fieldName(name), v.Type())
		}
		if err := set(f, name, o); err != nil {
			return err
		}
	}
	return nil
}

var durationType = reflect.TypeOf(time.Duration(0))

func set(f reflect.Value, name string, o agentfile.Option) error {
	if !f.IsValid() || !f.CanSet() {
		return fmt.Errorf("%w: %s has no settable field", ErrOption, name)
	}
	bad := func() error {
		return fmt.Errorf("%w: %s (%s) cannot set a field of type %s", ErrOption, name, o.Kind, f.Type())
	}
	switch o.Kind {
	case agentfile.KindString, agentfile.KindEnv:
		if f.Kind() != reflect.String {
			return bad()
		}
		f.SetString(o.String)
	case agentfile.KindInt:
		switch {
		case f.CanInt() && f.Type() != durationType:
			f.SetInt(o.Int)
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Int:
			x := int(o.Int)
			f.Set(reflect.ValueOf(&x))
		default:
			return bad()
		}
	case agentfile.KindFloat:
		switch {
		case f.CanFloat():
			f.SetFloat(o.Float)
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Float64:
			x := o.Float
			f.Set(reflect.ValueOf(&x))
		default:
			return bad()
		}
	case agentfile.KindBool:
		switch {
		case f.Kind() == reflect.Bool:
			f.SetBool(o.Bool)
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Bool:
			x := o.Bool
			f.Set(reflect.ValueOf(&x))
		default:
			return bad()
		}
	case agentfile.KindDuration:
		if f.Type() != durationType {
			return bad()
		}
		f.SetInt(int64(o.Duration))
	case agentfile.KindStrings:
		if f.Kind() != reflect.Slice || f.Type().Elem().Kind() != reflect.String {
			return bad()
		}
		s := reflect.MakeSlice(f.Type(), len(o.Strings), len(o.Strings))
		for i, x := range o.Strings {
			s.Index(i).SetString(x)
		}
		f.Set(s)
	case agentfile.KindInts:
		if f.Kind() != reflect.Slice || !f.Type().Elem().ConvertibleTo(reflect.TypeOf(int64(0))) || f.Type().Elem().Kind() == reflect.Float64 {
			return bad()
		}
		s := reflect.MakeSlice(f.Type(), len(o.Ints), len(o.Ints))
		for i, x := range o.Ints {
			s.Index(i).SetInt(x)
		}
		f.Set(s)
	default:
		return bad()
	}
	return nil
}
