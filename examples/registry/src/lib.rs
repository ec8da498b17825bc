//! The chapter's programs, in the chapter's order, each with what the chapter claims for it:
//! the one list that the chapter runner (`ch12`) runs and the workspace tests walk
//! (`tests/tests/chapter_programs.rs`: every program's quick run, its chapter workload and its
//! option checks).
//!
//! Adding a chapter program is its crate (which implements
//! [`ChapterProgram`](chapter_common::ChapterProgram)) plus one line in [`all`] (and its
//! dependency line in this crate's `Cargo.toml`).
//!
//! ```
//! let names: Vec<&str> = chapter_registry::all().iter().map(|p| p.name).collect();
//! assert_eq!(names.first(), Some(&"atomic_work_queue"));
//! ```

mod listing;
mod program;

pub use listing::Listing;
pub use program::{Program, Workload};

/// Every ported program, in the chapter's order, with what the chapter's own program measured
/// on an H100.
pub fn all() -> Vec<Program> {
    vec![
        Program::of::<atomic_work_queue::Program>("dynamic 1.81-1.98x over static"),
        Program::of::<cuda_graphs::Program>("graph replay 1.35-1.40x over stream launches"),
        Program::of::<cuda_graphs_pipeline::Program>("graph 3.03x over stream (0.0080 vs 0.0242 ms/iter)"),
        Program::of::<cuda_graphs_conditional::Program>("branch and loop on the device, no host round trip"),
        Program::of::<graph_conditional_runtime::Program>(
            "device-side branch beats sync + read flag + launch on the host",
        ),
        Program::of::<dynamic_parallelism::Program>(
            "children launched on the device: 3 host launches to 1, 25% faster",
        ),
        Program::of::<device_graph_launch::Program>(
            "device launch ~2x lower latency than host, flat in graph width",
        ),
        Program::of::<moe_router::Program>(
            "experts dispatched on the device: no host round trip per routing step",
        ),
        Program::of::<persistent_scheduler::Program>(
            "persistent queue kernel up to ~3x over a host-driven loop",
        ),
        Program::of::<streams_events::Program>("3+ streams cut copy+compute time 40-60% (1.7-2.5x)"),
        Program::of::<graph_memory::Program>(
            "allocate outside the graph: fixed addresses, memory reused across replays",
        ),
        Program::of::<kernel_launches::Program>("~3 µs gap per stream launch, none in a graph"),
        Program::of::<kernel_fusion::Program>(
            "fusion cuts global-memory round trips of a memory-bound chain",
        ),
        Program::of::<graph_bandwidth::Program>("same GB/s for big copies; graphs only cut launch cost"),
        // (one line per ported program; keep the chapter's order)
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_program_says_what_the_chapters_listing_is() {
        for program in all() {
            let listing = program.listing;
            assert!(listing.note.len() > 40, "{}: a note says what the listing is", program.name);
            assert!(
                ["same", "preset", "no listing", "broken"].contains(&listing.kind),
                "{}: {}",
                program.name,
                listing.kind
            );
            assert_eq!(listing.why.is_some(), listing.kind == "broken", "{}", program.name);
        }
    }

    #[test]
    fn the_chapters_broken_programs_are_named_as_such() {
        let kind = |name: &str| all().into_iter().find(|p| p.name == name).map(|p| p.listing.kind);
        assert_eq!(kind("cuda_graphs_conditional"), Some("broken"));
        assert_eq!(kind("dynamic_parallelism"), Some("broken"));
        assert_eq!(kind("atomic_work_queue"), Some("preset"));
        assert_eq!(kind("cuda_graphs"), Some("preset"));
    }

    #[test]
    fn every_program_is_listed_once_with_a_claim() {
        let programs = all();
        for (i, program) in programs.iter().enumerate() {
            assert!(!program.claim.is_empty(), "{}: a claim", program.name);
            assert!(programs[..i].iter().all(|p| p.name != program.name), "{} listed twice", program.name);
        }
    }
}
