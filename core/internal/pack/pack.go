// Package pack encodes plain Go values (structs of numbers, strings,
// booleans, slices and pointers) as bytes and back, exactly: floats by
// their bits (NaN included), nil and empty slices apart. A struct's
// exported fields are encoded in order; its unexported ones are not. It
// is the format of what a front end moves between processes of one build
// (replay.Part), so it carries no field names and no version: both sides
// must be the same build. encoding/gob would do, at 150 KB more of
// gzipped sim.wasm (docs/ui.md, "Sizes").
package pack

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
)

// fields caches each struct type's exported field indices (reading them
// from reflect.Type copies a StructField per field and value).
var fields sync.Map // reflect.Type → []int

func exported(t reflect.Type) []int {
	if f, ok := fields.Load(t); ok {
		return f.([]int)
	}
	var f []int
	for i := range t.NumField() {
		if t.Field(i).IsExported() {
			f = append(f, i)
		}
	}
	fields.Store(t, f)
	return f
}

// Marshal encodes v (a pointer encodes what it points to).
func Marshal(v any) ([]byte, error) {
	var b []byte
	r := reflect.ValueOf(v)
	if r.Kind() == reflect.Pointer && !r.IsNil() {
		r = r.Elem()
	}
	err := encode(&b, r)
	return b, err
}

// Unmarshal decodes b into *v, which must be the type Marshal was given
// (or a pointer to it). Bytes that are not such an encoding give an error,
// never a panic.
func Unmarshal(b []byte, v any) error {
	p := reflect.ValueOf(v)
	if p.Kind() != reflect.Pointer || p.IsNil() {
		return errors.New("pack: Unmarshal needs a non-nil pointer")
	}
	d := decoder{b: b}
	if err := d.decode(p.Elem()); err != nil {
		return err
	}
	if len(d.b) != 0 {
		return fmt.Errorf("pack: %d bytes left over", len(d.b))
	}
	return nil
}

func encode(b *[]byte, v reflect.Value) error {
	switch v.Kind() {
	case reflect.Bool:
		x := uint64(0)
		if v.Bool() {
			x = 1
		}
		*b = binary.AppendUvarint(*b, x)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		*b = binary.AppendVarint(*b, v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		*b = binary.AppendUvarint(*b, v.Uint())
	case reflect.Float32, reflect.Float64:
		*b = binary.LittleEndian.AppendUint64(*b, math.Float64bits(v.Float()))
	case reflect.String:
		*b = binary.AppendUvarint(*b, uint64(v.Len()))
		*b = append(*b, v.String()...)
	case reflect.Slice:
		if v.IsNil() {
			*b = binary.AppendVarint(*b, -1)
			return nil
		}
		*b = binary.AppendVarint(*b, int64(v.Len()))
		for i := range v.Len() {
			if err := encode(b, v.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Pointer:
		if v.IsNil() {
			*b = append(*b, 0)
			return nil
		}
		*b = append(*b, 1)
		return encode(b, v.Elem())
	case reflect.Struct:
		for _, i := range exported(v.Type()) {
			if err := encode(b, v.Field(i)); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("pack: cannot encode a %s", v.Type())
	}
	return nil
}

type decoder struct{ b []byte }

var errShort = errors.New("pack: the bytes end too soon")

func (d *decoder) uvarint() (uint64, error) {
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		return 0, errShort
	}
	d.b = d.b[n:]
	return x, nil
}

func (d *decoder) varint() (int64, error) {
	x, n := binary.Varint(d.b)
	if n <= 0 {
		return 0, errShort
	}
	d.b = d.b[n:]
	return x, nil
}

func (d *decoder) decode(v reflect.Value) error {
	switch v.Kind() {
	case reflect.Bool:
		x, err := d.uvarint()
		v.SetBool(x != 0)
		return err
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x, err := d.varint()
		v.SetInt(x)
		return err
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		x, err := d.uvarint()
		v.SetUint(x)
		return err
	case reflect.Float32, reflect.Float64:
		if len(d.b) < 8 {
			return errShort
		}
		v.SetFloat(math.Float64frombits(binary.LittleEndian.Uint64(d.b)))
		d.b = d.b[8:]
	case reflect.String:
		n, err := d.uvarint()
		if err != nil || n > uint64(len(d.b)) {
			return errShort
		}
		v.SetString(string(d.b[:n]))
		d.b = d.b[n:]
	case reflect.Slice:
		n, err := d.varint()
		if err != nil || n < -1 || n > int64(len(d.b)) { // every element takes a byte at least
			return errShort
		}
		if n == -1 {
			v.SetZero()
			return nil
		}
		s := reflect.MakeSlice(v.Type(), int(n), int(n))
		for i := range int(n) {
			if err := d.decode(s.Index(i)); err != nil {
				return err
			}
		}
		v.Set(s)
	case reflect.Pointer:
		if len(d.b) < 1 {
			return errShort
		}
		set := d.b[0]
		d.b = d.b[1:]
		if set == 0 {
			v.SetZero()
			return nil
		}
		p := reflect.New(v.Type().Elem())
		if err := d.decode(p.Elem()); err != nil {
			return err
		}
		v.Set(p)
	case reflect.Struct:
		for _, i := range exported(v.Type()) {
			if err := d.decode(v.Field(i)); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("pack: cannot decode a %s", v.Type())
	}
	return nil
}
