package numfmt

import "testing"

func TestThousands(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {15568, "15,568"}, {-1234567, "-1,234,567"}, {-12, "-12"}} {
		if got := Thousands(c.n); got != c.want {
			t.Errorf("Thousands(%d) = %q; want %q", c.n, got, c.want)
		}
	}
}

func TestBytes(t *testing.T) {
	for _, c := range []struct {
		n    float64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1536, "1.5 KiB"}, {3 << 30, "3.0 GiB"}, {1e21, "867.4 EiB"}} {
		if got := Bytes(c.n); got != c.want {
			t.Errorf("Bytes(%v) = %q; want %q", c.n, got, c.want)
		}
	}
}
