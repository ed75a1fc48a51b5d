package connector

import (
	"reflect"
	"testing"
	"unsafe"
)

// TestRegistry_ReusedStoreIsBlank: a retired store record that newStore
// hands out again equals a record from an empty registry in every field
// but its lists' arrays, whatever the retired one held. newStore resets
// fields one by one (a struct assignment rewrites every pointer through
// the write barrier); a field added to Transfer and not reset fails here.
func TestRegistry_ReusedStoreIsBlank(t *testing.T) {
	var reg Registry
	used := reg.newStore(3)
	reg.add(used)
	v := reflect.ValueOf(used).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem() // unexported too
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
			f.SetInt(7)
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
			f.SetUint(7)
		case reflect.Float64:
			f.SetFloat(7)
		case reflect.Slice:
			f.SetLen(f.Cap())
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		default:
			t.Fatalf("Transfer.%s: a %v this test cannot fill", v.Type().Field(i).Name, f.Kind())
		}
	}
	reg.retire(used)
	got := reg.newStore(2)
	if got != used {
		t.Fatal("the retired record was not reused")
	}
	var fresh Registry
	want := fresh.newStore(2)
	g, w := reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem()
	for i := range g.NumField() {
		name := g.Type().Field(i).Name
		gf, wf := g.Field(i), w.Field(i)
		if gf.Kind() == reflect.Slice {
			if gf.Len() != wf.Len() || gf.Cap() < wf.Len() {
				t.Errorf("Transfer.%s: len %d cap %d, want len %d", name, gf.Len(), gf.Cap(), wf.Len())
			}
			continue
		}
		if !gf.Equal(wf) {
			t.Errorf("Transfer.%s = %v reused, %v fresh", name, gf, wf)
		}
	}
}
