//! `atomic_work_queue` as a [`ChapterProgram`](chapter_common::ChapterProgram): what its `main`, the
//! chapter runner and the tests drive.

chapter_common::chapter_program!("atomic_work_queue");
