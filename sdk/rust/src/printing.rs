//! What a game prints: collected per call and returned to the host as
//! `printed` (and in the panic report), since a module has no stdout.

use std::cell::RefCell;
use std::fmt::{self, Write};

/// Most bytes of printed text kept per call; the rest is dropped with a marker.
pub const PRINTED_CAP: usize = 256 * 1024;

const TRUNCATED: &str = "\n[printed output truncated]\n";

thread_local! {
    static PRINTED: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Append formatted text (what `print!` does). Natively it also goes to stdout.
pub fn write_fmt(args: fmt::Arguments<'_>) {
    #[cfg(not(target_arch = "wasm32"))]
    std::print!("{}", args);
    PRINTED.with(|printed| {
        if let Ok(mut printed) = printed.try_borrow_mut() {
            if printed.len() < PRINTED_CAP {
                let _ = printed.write_fmt(args);
                if printed.len() >= PRINTED_CAP {
                    let mut cut = PRINTED_CAP;
                    while !printed.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    printed.truncate(cut);
                    printed.push_str(TRUNCATED);
                }
            }
        }
    });
}

/// Everything printed since the last `take_printed`, clearing it.
pub fn take_printed() -> String {
    PRINTED.with(|printed| printed.try_borrow_mut().map(|mut p| std::mem::take(&mut *p)).unwrap_or_default())
}

/// A copy of what was printed so far (for the panic report), without clearing.
pub(crate) fn peek_printed() -> String {
    PRINTED.with(|printed| printed.try_borrow().map(|p| p.clone()).unwrap_or_default())
}

/// Print to the call's `printed` text, like `std::print!`.
#[macro_export]
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::printing::write_fmt(::std::format_args!($($arg)*))
    };
}

/// Print a line to the call's `printed` text, like `std::println!`.
#[macro_export]
macro_rules! println {
    () => {
        $crate::printing::write_fmt(::std::format_args!("\n"))
    };
    ($($arg:tt)*) => {{
        $crate::printing::write_fmt(::std::format_args!($($arg)*));
        $crate::printing::write_fmt(::std::format_args!("\n"));
    }};
}
