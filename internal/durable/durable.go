// Package durable writes files that survive a crash: a file is replaced
// whole or not at all, and the directory entry of a file created, renamed
// or removed is on disk before the call returns.
package durable

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// WriteFile replaces path with data: a temporary file beside it (path +
// ".tmp": the caller is the only writer of path), fsync, rename, fsync of
// the directory. On error the temporary file is removed and path is as it
// was.
func WriteFile(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// Remove removes path (a missing one is no error) and syncs its directory.
func Remove(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// SyncDir fsyncs a directory, so that the entries created, renamed or
// removed in it are durable. File systems that cannot sync a directory
// (EINVAL, ENOTSUP) are taken as they are.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTSUP) {
		return err
	}
	return nil
}
