package record

// chunks is an append-only log stored in fixed-size chunks, so growing it
// never copies what is already recorded (a doubling slice would move the
// whole log at every growth, which dominated the cost of recording).
type chunks[T any] struct {
	c [][]T
	n int
}

const chunkBits = 14

func (l *chunks[T]) add(v T) {
	i := l.n & (1<<chunkBits - 1)
	if i == 0 {
		l.c = append(l.c, make([]T, 1<<chunkBits))
	}
	l.c[len(l.c)-1][i] = v
	l.n++
}

func (l *chunks[T]) at(i int) T { return l.c[i>>chunkBits][i&(1<<chunkBits-1)] }

func (l *chunks[T]) len() int { return l.n }
