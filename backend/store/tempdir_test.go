package store_test

import "os"

func tempDir() (string, error) { return os.MkdirTemp("", "ducklm-example-*") }
