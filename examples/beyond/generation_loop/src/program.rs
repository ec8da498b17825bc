//! `generation_loop` as a [`ChapterProgram`](chapter_common::ChapterProgram): what its `main`
//! and the tests drive. It is not a chapter program (the chapter runner does not list it); the
//! trait gives it the same flags, report and exit status as the others.

chapter_common::chapter_program!(crate::NAME);
