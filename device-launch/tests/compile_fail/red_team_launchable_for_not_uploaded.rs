// `Launchable` cannot be given to `NotUploaded` from outside the crate (orphan rule), so
// `handle` and `launch` stay unavailable before upload.
use device_launch::{Launchable, NotUploaded};

impl Launchable for NotUploaded {}

fn main() {}
