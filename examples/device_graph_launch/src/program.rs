//! `device_graph_launch` as a [`ChapterProgram`](chapter_common::ChapterProgram): what its `main`, the
//! chapter runner and the tests drive.

chapter_common::chapter_program!("device_graph_launch", sanitizer: crate::Options::for_sanitizer);
