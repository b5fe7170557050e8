//! The global allocator of the `preflint` binary and of the parse floor
//! (`examples/parse_floor.rs`), so both are measured with the same one.
//!
//! mimalloc instead of the system allocator: preflint allocates many small
//! objects from two threads, where glibc's arenas grow by `mprotect` calls
//! (~9,000 per run on kubespray). Its v2 line (the `v2` feature in
//! Cargo.toml): with v3, kubespray's whole tree peaked at 79 MB resident
//! against 63 MB with v2, and the kernel's zeroing of fresh pages is a large
//! part of a run on a VM.
//!
//! `mimalloc::MiMalloc` sends every request through mimalloc's aligned entry
//! points, which test the alignment again before taking the plain path. A
//! request whose alignment mimalloc already guarantees (at most 16 bytes and
//! no more than its size, see `mi_malloc_is_naturally_aligned`) goes here
//! straight to `mi_malloc`/`mi_zalloc`/`mi_realloc`; any other to the
//! aligned calls. A run on kubespray's whole tree makes ~590,000 requests.

use libmimalloc_sys as ffi;
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

/// `sizeof(max_align_t)`: what mimalloc aligns every block of at least this size to.
const MAX_PLAIN_ALIGN: usize = 16;

/// Whether a plain mimalloc block of `size` bytes is aligned to `align`.
fn plain(size: usize, align: usize) -> bool {
    align <= MAX_PLAIN_ALIGN && align <= size
}

pub struct Mi;

// SAFETY: every call forwards to mimalloc, which returns blocks of at least
// the requested size, aligned as `plain` or the aligned call guarantees, and
// frees or resizes any block it returned (aligned or not) with `mi_free` /
// `mi_realloc*`.
unsafe impl GlobalAlloc for Mi {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl.
        unsafe {
            if plain(layout.size(), layout.align()) {
                ffi::mi_malloc(layout.size()).cast()
            } else {
                ffi::mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl.
        unsafe {
            if plain(layout.size(), layout.align()) {
                ffi::mi_zalloc(layout.size()).cast()
            } else {
                ffi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: see the impl.
        unsafe { ffi::mi_free(ptr.cast::<c_void>()) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: see the impl.
        unsafe {
            if plain(new_size, layout.align()) {
                ffi::mi_realloc(ptr.cast::<c_void>(), new_size).cast()
            } else {
                ffi::mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
            }
        }
    }
}
