//! Why the store takes no new task, in the words a tool error gives.

use std::time::Duration;

use crate::duration;

/// Why a new task was refused.
#[derive(Debug)]
pub(crate) enum Refused {
    /// The store (shared or not) is full.
    Full(Full),
    /// The shared task store cannot be reached: no task can be held.
    Unreachable(String),
}

impl Refused {
    /// The sentence that says so, for a tool error.
    pub(crate) fn explain(&self, ttl: Duration) -> String {
        match self {
            Self::Full(full) => full.explain(ttl),
            Self::Unreachable(why) => format!(
                "the shared task store cannot be reached, so no task can be created ({why}); \
                 calls that finish before they become tasks still run"
            ),
        }
    }

    /// What to do about it.
    pub(crate) fn advice(&self) -> &'static str {
        match self {
            Self::Full(_) => "Try again later, once a task has ended and its result has expired",
            Self::Unreachable(_) => {
                "Try again once the NATS server answers, or call without the tasks extension"
            }
        }
    }
}

/// The store is full: a new task cannot be held.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Full {
    /// `tasks.max`.
    pub(crate) max: usize,
    /// How many of the held tasks are still running or asking.
    pub(crate) active: usize,
}

impl Full {
    /// The sentence that says so, for a tool error.
    pub(crate) fn explain(&self, ttl: Duration) -> String {
        let tasks = if self.max == 1 { "task" } else { "tasks" };
        let active = match (self.max, self.active) {
            (1, 1) => "it is still running or waiting for approval".to_string(),
            (1, _) => format!(
                "it ended and keeps its result for {} after it ended",
                duration::format(ttl)
            ),
            (_, active) => format!(
                "{active} of them still running or waiting for approval and the others keeping \
                 their results for {} after they ended",
                duration::format(ttl)
            ),
        };
        format!(
            "the task store is full: it holds {} {tasks} (tasks.max, --max-tasks), {active}",
            self.max
        )
    }
}
