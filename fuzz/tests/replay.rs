//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/`) through each target on stable,
//! so every input the fuzzer ever kept, and every crash it found once, runs in the default
//! test run.

use std::fs;
use std::path::Path;

#[test]
fn every_corpus_input_runs_through_its_target_without_a_finding() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    for (name, target) in fiskgen_fuzz::TARGETS {
        let dir = corpus.join(name);
        let mut inputs: Vec<_> = fs::read_dir(&dir)
            .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
            .map(|entry| entry.expect("a corpus entry").path())
            .collect();
        inputs.sort();
        assert!(
            inputs.len() >= 5,
            "{}: the corpus holds {} inputs",
            dir.display(),
            inputs.len()
        );
        for input in inputs {
            let data = fs::read(&input).expect("a corpus file");
            eprintln!("{name}: {}", input.display());
            target(&data);
        }
    }
}
