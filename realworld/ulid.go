package realworld

import (
	"crypto/rand"
	"time"
)

// crockford is the ULID alphabet (Crockford's base 32).
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// newULID is a ULID: 48 bits of milliseconds and 80 random bits, 26
// characters. The harness mints hook correlation ids with it, shaped as
// core's (hook_<ULID>).
func newULID() string {
	var b [16]byte
	ms := uint64(time.Now().UnixMilli())
	for i := 0; i < 6; i++ {
		b[i] = byte(ms >> (40 - 8*i))
	}
	if _, err := rand.Read(b[6:]); err != nil {
		panic(err)
	}
	// 128 bits as 26 base-32 digits, the first holding 3 bits.
	var out [26]byte
	var hi, lo uint64
	for i := 0; i < 8; i++ {
		hi = hi<<8 | uint64(b[i])
		lo = lo<<8 | uint64(b[i+8])
	}
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}
