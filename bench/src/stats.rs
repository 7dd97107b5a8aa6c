//! Percentiles of one run, and the median and spread of a figure over repeated runs.

use std::time::Duration;

/// The `q` quantile (0..=1) of `samples` by the nearest-rank method; `None` when empty.
pub(crate) fn quantile(samples: &[f64], q: f64) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len()) - 1).copied()
}

/// Milliseconds, as a float.
pub(crate) fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// A figure measured several times: its median and its spread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// The median of the samples.
    pub median: f64,
    /// The smallest sample.
    pub min: f64,
    /// The largest sample.
    pub max: f64,
    /// How many samples.
    pub n: usize,
}

impl Summary {
    /// The summary of `samples`; `None` when there are none.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        let median = quantile(samples, 0.5)?;
        let min = samples.iter().copied().fold(f64::INFINITY, f64::min);
        let max = samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Some(Summary {
            median,
            min,
            max,
            n: samples.len(),
        })
    }
}

/// Latencies (ms) of one load run and its wall time.
#[derive(Debug, Clone, Default)]
pub(crate) struct Run {
    pub(crate) latencies_ms: Vec<f64>,
    pub(crate) wall: Duration,
    /// CPU time (user + system) the server process spent during the run, ms.
    pub(crate) server_cpu_ms: Option<f64>,
    /// CPU time the benchmark process (the client, or the spawner) spent during the run, ms.
    pub(crate) client_cpu_ms: Option<f64>,
}

impl Run {
    pub(crate) fn p50(&self) -> Option<f64> {
        quantile(&self.latencies_ms, 0.5)
    }

    pub(crate) fn p99(&self) -> Option<f64> {
        quantile(&self.latencies_ms, 0.99)
    }

    fn per_request(&self, total: Option<f64>) -> Option<f64> {
        let n = self.latencies_ms.len();
        total.filter(|_| n > 0).map(|t| t / n as f64)
    }

    pub(crate) fn server_cpu(&self) -> Option<f64> {
        self.per_request(self.server_cpu_ms)
    }

    pub(crate) fn client_cpu(&self) -> Option<f64> {
        self.per_request(self.client_cpu_ms)
    }

    /// Completed requests per second.
    pub(crate) fn throughput(&self) -> Option<f64> {
        let secs = self.wall.as_secs_f64();
        (secs > 0.0 && !self.latencies_ms.is_empty()).then(|| self.latencies_ms.len() as f64 / secs)
    }
}

/// One load level (a concurrency) measured in several rounds.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rounds {
    pub(crate) runs: Vec<Run>,
}

/// The round-by-round figures of a load level, summarised.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Level {
    /// Clients in flight at once.
    pub concurrency: usize,
    /// Median latency (ms) per round.
    pub p50: Summary,
    /// 99th percentile latency (ms) per round.
    pub p99: Summary,
    /// Requests per second per round.
    pub throughput: Summary,
    /// Server CPU time per request (ms), when the server's pid is known.
    pub server_cpu: Option<Summary>,
    /// Benchmark-process CPU time per request (ms): the client's cost, or the spawner's.
    pub client_cpu: Option<Summary>,
    /// Requests measured, all rounds together.
    pub requests: usize,
}

impl Rounds {
    pub(crate) fn level(&self, concurrency: usize) -> Option<Level> {
        let pick =
            |f: fn(&Run) -> Option<f64>| -> Vec<f64> { self.runs.iter().filter_map(f).collect() };
        Some(Level {
            concurrency,
            p50: Summary::of(&pick(Run::p50))?,
            p99: Summary::of(&pick(Run::p99))?,
            throughput: Summary::of(&pick(Run::throughput))?,
            server_cpu: Summary::of(&pick(Run::server_cpu)),
            client_cpu: Summary::of(&pick(Run::client_cpu)),
            requests: self.runs.iter().map(|r| r.latencies_ms.len()).sum(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_quantiles() {
        let samples: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&samples, 0.5), Some(50.0));
        assert_eq!(quantile(&samples, 0.99), Some(99.0));
        assert_eq!(quantile(&[3.0], 0.99), Some(3.0));
        assert_eq!(quantile(&[], 0.5), None);
        let summary = Summary::of(&[5.0, 1.0, 3.0]);
        assert_eq!(
            summary.map(|s| (s.median, s.min, s.max)),
            Some((3.0, 1.0, 5.0))
        );
    }
}
