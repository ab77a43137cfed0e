//! What each tuning worker is doing and since when, so that a stalled run names the work it
//! is stuck on. A hung GPU kernel never returns to the host: the run cannot abort it (only
//! ending the process frees the device), but it can say which candidate to leave out.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One worker's current step.
#[derive(Debug)]
struct Step {
    what: String,
    since: Instant,
    /// Already reported as overdue (each step once).
    reported: bool,
}

/// The current step of every worker.
#[derive(Debug)]
pub struct Activity {
    steps: Vec<Mutex<Option<Step>>>,
}

/// A step that has run longer than the warning threshold.
#[derive(Clone, Debug, PartialEq)]
pub struct Overdue {
    pub worker: usize,
    pub what: String,
    pub elapsed: Duration,
}

impl Activity {
    pub fn new(workers: usize) -> Self {
        Activity { steps: (0..workers).map(|_| Mutex::new(None)).collect() }
    }

    /// Worker `worker` starts `what` (replacing its previous step).
    pub fn begin(&self, worker: usize, what: String) {
        if let Some(slot) = self.steps.get(worker) {
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(Step { what, since: Instant::now(), reported: false });
        }
    }

    /// Worker `worker` is between steps.
    pub fn end(&self, worker: usize) {
        if let Some(slot) = self.steps.get(worker) {
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
    }

    /// Steps running for longer than `after` at `now`, each returned once.
    pub fn overdue(&self, after: Duration, now: Instant) -> Vec<Overdue> {
        let mut out = Vec::new();
        for (worker, slot) in self.steps.iter().enumerate() {
            let mut step = slot.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(s) = step.as_mut() {
                let elapsed = now.saturating_duration_since(s.since);
                if !s.reported && elapsed > after {
                    s.reported = true;
                    out.push(Overdue { worker, what: s.what.clone(), elapsed });
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_is_overdue_once_and_a_new_step_starts_afresh() {
        let a = Activity::new(2);
        a.begin(0, "candidate x".into());
        a.begin(1, "candidate y".into());
        let t0 = Instant::now();
        assert!(a.overdue(Duration::from_secs(5), t0).is_empty());
        let late = a.overdue(Duration::from_secs(5), t0 + Duration::from_secs(6));
        assert_eq!(late.iter().map(|o| (o.worker, o.what.as_str())).collect::<Vec<_>>(), vec![(0, "candidate x"), (1, "candidate y")]);
        assert!(late.iter().all(|o| o.elapsed >= Duration::from_secs(6)));
        // Reported once per step.
        assert!(a.overdue(Duration::from_secs(5), t0 + Duration::from_secs(9)).is_empty());
        a.begin(0, "candidate z".into());
        a.end(1);
        let later = a.overdue(Duration::from_secs(5), Instant::now() + Duration::from_secs(6));
        assert_eq!(later.iter().map(|o| (o.worker, o.what.as_str())).collect::<Vec<_>>(), vec![(0, "candidate z")]);
        // Out-of-range workers are ignored rather than panicking.
        a.begin(7, "nobody".into());
        a.end(7);
    }
}
