//! The leak report: streams, events and allocations still alive at `birenDeviceReset` or at
//! process exit (validator on).

use crate::runtime::diagnostics;
use crate::runtime::diagnostics::caller::describe;

pub struct Leaks {
    pub streams: Vec<(u64, usize)>,
    pub events: Vec<(u64, usize)>,
    /// (base, size, caller)
    pub allocations: Vec<(usize, usize, usize)>,
}

impl Leaks {
    pub fn is_empty(&self) -> bool {
        self.streams.is_empty() && self.events.is_empty() && self.allocations.is_empty()
    }

    pub fn report(&self, when: &str) {
        if self.is_empty() || !diagnostics::validator_on() {
            return;
        }
        let bytes: usize = self.allocations.iter().map(|a| a.1).sum();
        diagnostics::line(&format!(
            "biren leak report ({when}): {} stream(s), {} event(s), {} allocation(s) ({bytes} bytes) still alive",
            self.streams.len(),
            self.events.len(),
            self.allocations.len()
        ));
        for (id, caller) in &self.streams {
            diagnostics::line(&format!(
                "  leaked stream #{id}, created by {}",
                describe(*caller)
            ));
        }
        for (id, caller) in &self.events {
            diagnostics::line(&format!(
                "  leaked event #{id}, created by {} (every birenEventCreate needs a birenEventDestroy)",
                describe(*caller)
            ));
        }
        for (base, size, caller) in &self.allocations {
            diagnostics::line(&format!(
                "  leaked allocation of {size} bytes at {base:#x}, allocated by {}",
                describe(*caller)
            ));
        }
    }
}
