//go:build !amd64

package generate

// argmax32 is the index of the first greatest of v, as a scan that keeps the first greater
// one finds it (a NaN is never greater; v[0] NaN keeps 0).
func argmax32(v []float32) int { return argmax32Lanes(v) }
