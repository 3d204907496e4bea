package bm25

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Sibling directories used by a rebuild of the index at path:
//
//	path.building  being filled; incomplete, removed by Open
//	path.new       complete, waiting for the swap; Open finishes the swap
//	path.old       the previous index during the swap; removed by Open
func buildingPath(path string) string { return path + ".building" }
func newPath(path string) string      { return path + ".new" }
func oldPath(path string) string      { return path + ".old" }

// FillFunc writes the full contents of a fresh index, typically by reading every
// document from the store and calling Apply, with Seq set to the store's LatestSeq taken
// before the read so that tailing resumes from there.
type FillFunc func(ctx context.Context, ix *Index) error

// Rebuild builds a fresh index next to path with fill and then swaps it in place of
// the index at path, which must not be open (for the open index of a running service use
// (*Index).Rebuild). The directory swap is two renames; Open completes a swap
// interrupted between them, so a crash never leaves a half-built index at path.
func Rebuild(ctx context.Context, path string, fill FillFunc) error {
	if path == "" {
		return fmt.Errorf("rebuild bm25 index: %w: empty path", ErrInvalid)
	}
	if err := recoverSwap(path); err != nil {
		return fmt.Errorf("rebuild bm25 index %s: %w", path, err)
	}
	if err := build(ctx, path, fill); err != nil {
		return fmt.Errorf("rebuild bm25 index %s: %w", path, err)
	}
	if err := swap(path); err != nil {
		return fmt.Errorf("rebuild bm25 index %s: %w", path, err)
	}
	return nil
}

// Rebuild rebuilds the open index with fill while searches keep using the current one,
// then swaps the directories and reopens. Apply calls wait during the rebuild; the
// watermark becomes the rebuilt index's.
func (ix *Index) Rebuild(ctx context.Context, fill FillFunc) error {
	ix.applyM.Lock()
	defer ix.applyM.Unlock()
	if err := build(ctx, ix.path, fill); err != nil {
		return fmt.Errorf("rebuild bm25 index %s: %w", ix.path, err)
	}

	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.idx == nil {
		return ErrClosed
	}
	if err := ix.idx.Close(); err != nil {
		return fmt.Errorf("rebuild bm25 index %s: close current: %w", ix.path, err)
	}
	ix.idx = nil
	if err := swap(ix.path); err != nil {
		return fmt.Errorf("rebuild bm25 index %s: %w", ix.path, err)
	}
	bi, err := openOrCreate(ix.path)
	if err != nil {
		return fmt.Errorf("rebuild bm25 index %s: reopen: %w", ix.path, err)
	}
	if err := ix.load(bi); err != nil {
		_ = bi.Close()
		return fmt.Errorf("rebuild bm25 index %s: %w", ix.path, err)
	}
	ix.idx = bi
	return nil
}

// build fills path.building and renames it to path.new once complete and closed.
func build(ctx context.Context, path string, fill FillFunc) error {
	if fill == nil {
		return fmt.Errorf("%w: nil fill function", ErrInvalid)
	}
	tmp := buildingPath(path)
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("remove stale %s: %w", tmp, err)
	}
	if err := os.RemoveAll(newPath(path)); err != nil {
		return fmt.Errorf("remove stale %s: %w", newPath(path), err)
	}
	nix, err := Open(tmp)
	if err != nil {
		return err
	}
	if err := fill(ctx, nix); err != nil {
		_ = nix.Close()
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("fill: %w", err)
	}
	if err := nix.Compact(ctx); err != nil {
		_ = nix.Close()
		_ = os.RemoveAll(tmp)
		return err
	}
	if err := nix.Close(); err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, newPath(path)); err != nil {
		return fmt.Errorf("publish rebuilt index: %w", err)
	}
	return nil
}

// swap moves path.new to path, keeping the previous index as path.old until done.
func swap(path string) error {
	if err := os.RemoveAll(oldPath(path)); err != nil {
		return fmt.Errorf("remove %s: %w", oldPath(path), err)
	}
	if err := os.Rename(path, oldPath(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("move current index aside: %w", err)
	}
	if err := os.Rename(newPath(path), path); err != nil {
		return fmt.Errorf("move rebuilt index in place: %w", err)
	}
	if err := os.RemoveAll(oldPath(path)); err != nil {
		return fmt.Errorf("remove previous index: %w", err)
	}
	return nil
}

// recoverSwap cleans up after a rebuild interrupted by a crash: an incomplete build is
// discarded; a complete one (path.new) is swapped in.
func recoverSwap(path string) error {
	if err := os.RemoveAll(buildingPath(path)); err != nil {
		return fmt.Errorf("remove incomplete rebuild: %w", err)
	}
	if _, err := os.Stat(newPath(path)); err == nil {
		return swap(path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("check %s: %w", newPath(path), err)
	}
	if err := os.RemoveAll(oldPath(path)); err != nil {
		return fmt.Errorf("remove previous index: %w", err)
	}
	return nil
}
