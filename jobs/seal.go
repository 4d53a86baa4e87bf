package jobs

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// sealer seals values at rest with AES-256-GCM, the value's key as additional data; a nil
// sealer leaves them as they are (jobs in memory only).
type sealer struct{ aead cipher.AEAD }

// ReadKey reads a 32-byte key from path: the raw bytes, or 64 hexadecimal characters (a
// trailing newline allowed). The error never quotes the file's content.
func ReadKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("jobs: SLUICE_JOBS_KEY_FILE: %w", err)
	}
	if len(b) == 32 {
		return b, nil
	}
	if s := strings.TrimSpace(string(b)); len(s) == 64 {
		if k, err := hex.DecodeString(s); err == nil {
			return k, nil
		}
	}
	return nil, errors.New("jobs: SLUICE_JOBS_KEY_FILE must hold 32 bytes, raw or as 64 hexadecimal characters")
}

func newSealer(key []byte) (*sealer, error) {
	if key == nil {
		return nil, nil
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("jobs: key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("jobs: key: %w", err)
	}
	return &sealer{aead: aead}, nil
}

func (s *sealer) seal(key string, plain []byte) []byte {
	if s == nil {
		return plain
	}
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return s.aead.Seal(nonce, nonce, plain, []byte(key))
}

// errSealed is a value that does not open under the key: another key, or tampered with.
var errSealed = errors.New("jobs: a stored value does not open under SLUICE_JOBS_KEY_FILE's key")

func (s *sealer) open(key string, sealed []byte) ([]byte, error) {
	if s == nil {
		return sealed, nil
	}
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return nil, errSealed
	}
	out, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(key))
	if err != nil {
		return nil, errSealed
	}
	return out, nil
}
