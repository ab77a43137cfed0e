//! Progress of `blockfp8 bench` on stderr (a line per finished shape, a bar on a terminal),
//! and Ctrl-C: the first one stops after the shape in flight so that the finished shapes
//! are still printed; a second one quits at once.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use blockfp8::bench::{render_progress_line, ShapeResult};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

#[cfg(unix)]
mod sigint {
    use std::sync::atomic::Ordering;

    extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
        fn _exit(status: i32) -> !;
    }
    const SIGINT: i32 = 2;
    const SIG_DFL: usize = 0;

    // Only async-signal-safe work here: an atomic swap, and _exit on the second Ctrl-C.
    extern "C" fn on_sigint(_: i32) {
        if super::INTERRUPTED.swap(true, Ordering::SeqCst) {
            unsafe { _exit(130) }
        }
    }

    pub fn install() {
        // SAFETY: the handler only touches an atomic and calls _exit.
        unsafe {
            signal(SIGINT, on_sigint as extern "C" fn(i32) as usize);
        }
    }

    pub fn restore() {
        // SAFETY: resets SIGINT to its default action.
        unsafe {
            signal(SIGINT, SIG_DFL);
        }
    }
}

#[cfg(not(unix))]
mod sigint {
    pub fn install() {}
    pub fn restore() {}
}

pub struct BenchProgress {
    total: usize,
    /// Lines are printed (progress on, not --quiet).
    show: bool,
    bar: indicatif::ProgressBar,
    watcher_stop: Arc<AtomicBool>,
}

impl BenchProgress {
    pub fn start(total: usize, show: bool) -> BenchProgress {
        INTERRUPTED.store(false, Ordering::SeqCst);
        sigint::install();
        let bar = if show && std::io::stderr().is_terminal() {
            let bar = indicatif::ProgressBar::new(total as u64);
            if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} shapes, {elapsed} elapsed, ETA {eta}") {
                bar.set_style(style);
            }
            bar
        } else {
            indicatif::ProgressBar::hidden()
        };
        // The handler cannot print; say from here that the Ctrl-C was seen.
        let watcher_stop = Arc::new(AtomicBool::new(false));
        let stop = watcher_stop.clone();
        let note_bar = bar.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                if INTERRUPTED.load(Ordering::SeqCst) {
                    let msg = "interrupted: finishing the shape in flight, then printing the finished ones (Ctrl-C again quits now)";
                    if note_bar.is_hidden() {
                        eprintln!("{msg}");
                    } else {
                        note_bar.println(msg);
                    }
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        BenchProgress { total, show, bar, watcher_stop }
    }

    /// Reports one finished shape; `false` once Ctrl-C was pressed (stop there).
    pub fn shape_done(&self, index: usize, s: &ShapeResult) -> bool {
        if self.show {
            let line = render_progress_line(index, self.total, s);
            if self.bar.is_hidden() {
                eprintln!("{line}");
            } else {
                self.bar.println(line);
                self.bar.inc(1);
            }
        }
        !INTERRUPTED.load(Ordering::SeqCst)
    }

}

impl Drop for BenchProgress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
        self.watcher_stop.store(true, Ordering::SeqCst);
        sigint::restore();
    }
}
