//! The binary's task flags: they override `expose.agent.mcp.tasks` for one run.

use std::time::Duration;

use fiskgen_contract::defaults::{TASK_DURATION_LIMIT, TASK_MAX_LIMIT};

use crate::duration;
use crate::spec::app::TaskSettings;

/// `--no-tasks`, `--task-after`, `--task-ttl`, `--max-tasks` (docs/runtime.md, "Tasks").
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct TaskArgs {
    /// Never turn calls into tasks (the tasks extension is then not declared)
    #[arg(long, conflicts_with_all = ["task_after", "task_ttl", "max_tasks"])]
    no_tasks: bool,
    /// A command still running this long becomes a task, for clients that declare the tasks
    /// extension (Go syntax) [default: the built-in tasks.after, else 2s]
    #[arg(long, value_name = "DURATION", value_parser = task_duration)]
    task_after: Option<Duration>,
    /// How long a task may run, and how long its result is kept after it ends (Go syntax)
    /// [default: the built-in tasks.ttl, else 1h]
    #[arg(long, value_name = "DURATION", value_parser = task_duration)]
    task_ttl: Option<Duration>,
    /// Tasks held at once, running or keeping a result (1-4096) [default: the built-in
    /// tasks.max, else 64]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=i64::from(TASK_MAX_LIMIT)))]
    max_tasks: Option<u32>,
}

impl TaskArgs {
    /// The settings in force: the built-in ones with these flags applied. A flag turns tasks
    /// on for a server built with them off (with the defaults for what it does not set).
    pub(crate) fn settings(&self, built: Option<TaskSettings>) -> Option<TaskSettings> {
        if self.no_tasks {
            return None;
        }
        let given =
            self.task_after.is_some() || self.task_ttl.is_some() || self.max_tasks.is_some();
        let base = match built {
            Some(built) => built,
            None if given => TaskSettings {
                after: fiskgen_contract::defaults::TASK_AFTER,
                ttl: fiskgen_contract::defaults::TASK_TTL,
                max: fiskgen_contract::defaults::TASK_MAX,
                required: &[],
            },
            None => return None,
        };
        Some(TaskSettings {
            after: self.task_after.unwrap_or(base.after),
            ttl: self.task_ttl.unwrap_or(base.ttl),
            max: self.max_tasks.unwrap_or(base.max),
            required: base.required,
        })
    }
}

/// A positive Go duration of at most a week.
fn task_duration(text: &str) -> Result<Duration, String> {
    match duration::parse(text)? {
        Duration::ZERO => Err("must be greater than zero".into()),
        long if long > TASK_DURATION_LIMIT => Err(format!(
            "must be at most {}",
            duration::format(TASK_DURATION_LIMIT)
        )),
        duration => Ok(duration),
    }
}
