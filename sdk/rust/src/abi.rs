//! The raw ABI v1 (docs/abi.md, "Exports"): every `unsafe` of the SDK lives
//! here. `export_game!` turns these into the module's exports.

use std::alloc::{self, GlobalAlloc, Layout, System};
use std::cell::{Cell, RefCell};
use std::ptr;

use crate::cache::StateCache;
use crate::dispatch::dispatch_into;
use crate::game::Game;
use crate::json_out::{name, ObjectWriter};
use crate::printing::peek_printed;

/// What `tablehost_abi_v1` returns: the minor version of ABI v1.
pub const ABI_MINOR_VERSION: i32 = 1;

thread_local! {
    static CACHE: RefCell<StateCache> = RefCell::new(StateCache::new());
    /// The last response; valid until the next `tablehost_call`, which
    /// rewrites it in place (its capacity is kept across calls).
    static RESPONSE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// `{"message", "printed"}` of the last panic, written by the hook.
    static PANIC_REPORT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static HOOK_INSTALLED: Cell<bool> = const { Cell::new(false) };
}

/// `(ptr << 32) | len` as the i64 the host unpacks (both as u32).
fn pack(ptr: *const u8, len: usize) -> i64 {
    (((ptr as usize as u64) << 32) | (len as u64 & 0xFFFF_FFFF)) as i64
}

fn buffer_layout(len: i32) -> Option<Layout> {
    let len = usize::try_from(len).ok()?;
    Layout::from_size_align(len.max(1), 1).ok()
}

/// `tablehost_alloc(len)`: a fresh buffer of `len` bytes, or 0 when `len` is
/// negative or memory is exhausted.
///
/// # Safety
/// Only for the host through the export.
pub unsafe fn alloc(len: i32) -> i32 {
    match buffer_layout(len) {
        Some(layout) => alloc::alloc(layout) as usize as i32,
        None => 0,
    }
}

/// `tablehost_dealloc(ptr, len)`: free a buffer from `alloc` (same `len`).
///
/// # Safety
/// `ptr` must come from `alloc(len)` and not be freed yet.
pub unsafe fn dealloc(ptr: i32, len: i32) {
    if ptr == 0 {
        return;
    }
    if let Some(layout) = buffer_layout(len) {
        alloc::dealloc(ptr as usize as *mut u8, layout);
    }
}

/// `tablehost_call(op, ptr, len)`: run `op` on the request bytes and return
/// the packed location of the response, which stays valid until the next call.
///
/// # Safety
/// `ptr..ptr+len` must be readable guest memory for the whole call.
pub unsafe fn call<G: Game>(op: i32, ptr: i32, len: i32) -> i64 {
    install_panic_hook();
    let request: &[u8] = if len <= 0 || ptr == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(ptr as usize as *const u8, len as usize)
    };
    RESPONSE.with(|response| {
        let mut response = response.borrow_mut();
        CACHE.with(|cache| dispatch_into::<G>(&mut cache.borrow_mut(), op, request, &mut response));
        pack(response.as_ptr(), response.len())
    })
}

/// `tablehost_panic_message()`: the packed location of
/// `{"message": str|null, "printed": str}` describing the last panic.
pub fn panic_message() -> i64 {
    PANIC_REPORT.with(|report| {
        let mut report = report.borrow_mut();
        if report.is_empty() {
            *report = panic_report(None, &peek_printed());
        }
        pack(report.as_ptr(), report.len())
    })
}

/// `{"message": message|null, "printed": printed}` as JSON bytes, written by
/// `json_out` (serde_json's serializer would add its own copy of the value
/// writer to every module, for a path taken only after a panic).
fn panic_report(message: Option<&str>, printed: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut report = ObjectWriter::begin(&mut out);
    match message {
        Some(text) => report.member(name!("message"), text),
        None => report.member(name!("message"), &None::<String>),
    };
    report.member(name!("printed"), printed);
    report.end();
    out
}

/// Keep each panic's message, location and printed text for `panic_message`
/// (with `panic = "abort"` the trap follows right after the hook).
fn install_panic_hook() {
    if HOOK_INSTALLED.with(|installed| installed.replace(true)) {
        return;
    }
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let text = if let Some(text) = payload.downcast_ref::<&str>() {
            (*text).to_owned()
        } else if let Some(text) = payload.downcast_ref::<String>() {
            text.clone()
        } else {
            "panic with a non-string payload".to_owned()
        };
        let message = match info.location() {
            Some(at) => format!("panicked at {}:{}:{}: {}", at.file(), at.line(), at.column(), text),
            None => format!("panicked: {}", text),
        };
        let report = panic_report(Some(&message), &peek_printed());
        PANIC_REPORT.with(|slot| {
            if let Ok(mut slot) = slot.try_borrow_mut() {
                *slot = report;
            }
        });
    }));
}

/// The module's global allocator (`export_game!` installs it): blocks of at
/// most 256 bytes and alignment 8 come from one free list per 16-byte size
/// class, everything else from the system allocator (dlmalloc). A move
/// allocates and frees many short strings and vectors, and dlmalloc's
/// bookkeeping cost more wasm instructions than the rules. Freed small
/// blocks are kept for reuse, never handed back.
pub struct SmallBlockAlloc;

const CLASS_BYTES: usize = 16;
const CLASSES: usize = 16;
/// dlmalloc's own alignment on wasm32; asking it for more takes a slow path.
const CLASS_ALIGN: usize = 8;

/// Head of each size class's free list; a free block's first word points to
/// the next. Only wasm32 without threads uses this, so there is one thread.
static mut FREE_LISTS: [*mut u8; CLASSES] = [ptr::null_mut(); CLASSES];

/// The size class serving `layout`, if it is small enough.
fn size_class(layout: &Layout) -> Option<usize> {
    if layout.size() <= CLASS_BYTES * CLASSES && layout.align() <= CLASS_ALIGN {
        Some(layout.size().saturating_sub(1) / CLASS_BYTES)
    } else {
        None
    }
}

unsafe impl GlobalAlloc for SmallBlockAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match size_class(&layout) {
            Some(class) => {
                let head = FREE_LISTS[class];
                if head.is_null() {
                    System.alloc(Layout::from_size_align_unchecked((class + 1) * CLASS_BYTES, CLASS_ALIGN))
                } else {
                    FREE_LISTS[class] = *(head as *mut *mut u8);
                    head
                }
            }
            None => System.alloc(layout),
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if size_class(&layout).is_none() {
            return System.alloc_zeroed(layout);
        }
        let block = self.alloc(layout);
        if !block.is_null() {
            ptr::write_bytes(block, 0, layout.size());
        }
        block
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        match size_class(&layout) {
            Some(class) => {
                *(block as *mut *mut u8) = FREE_LISTS[class];
                FREE_LISTS[class] = block;
            }
            None => System.dealloc(block, layout),
        }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        match (size_class(&layout), size_class(&new_layout)) {
            (Some(old), Some(new)) if old == new => block,
            (None, None) => System.realloc(block, layout, new_size),
            _ => {
                let moved = self.alloc(new_layout);
                if !moved.is_null() {
                    ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
                    self.dealloc(block, layout);
                }
                moved
            }
        }
    }
}

/// Generate every ABI v1 export for the game type `$game` (see docs/abi.md).
///
/// ```ignore
/// tablehost_sdk::export_game!(TicTacToe);
/// ```
/// The exports (and the global allocator, `SmallBlockAlloc`) exist only on
/// wasm32; on other targets the macro only checks that `$game` implements `Game`.
#[macro_export]
macro_rules! export_game {
    ($game:ty) => {
        const _: fn() = || {
            fn assert_game<G: $crate::Game>() {}
            assert_game::<$game>();
        };

        #[cfg(target_arch = "wasm32")]
        #[global_allocator]
        static TABLEHOST_ALLOCATOR: $crate::abi::SmallBlockAlloc = $crate::abi::SmallBlockAlloc;

        #[cfg(target_arch = "wasm32")]
        #[no_mangle]
        pub extern "C" fn tablehost_abi_v1() -> i32 {
            $crate::abi::ABI_MINOR_VERSION
        }

        #[cfg(target_arch = "wasm32")]
        #[no_mangle]
        pub extern "C" fn tablehost_alloc(len: i32) -> i32 {
            unsafe { $crate::abi::alloc(len) }
        }

        #[cfg(target_arch = "wasm32")]
        #[no_mangle]
        pub extern "C" fn tablehost_dealloc(ptr: i32, len: i32) {
            unsafe { $crate::abi::dealloc(ptr, len) }
        }

        #[cfg(target_arch = "wasm32")]
        #[no_mangle]
        pub extern "C" fn tablehost_call(op: i32, ptr: i32, len: i32) -> i64 {
            unsafe { $crate::abi::call::<$game>(op, ptr, len) }
        }

        #[cfg(target_arch = "wasm32")]
        #[no_mangle]
        pub extern "C" fn tablehost_panic_message() -> i64 {
            $crate::abi::panic_message()
        }
    };
}
