// The sealing trait cannot be named from outside: its module is private.
enum Fake {}
impl device_launch::exec::sealed::Sealed for Fake {
    const NAME: &'static str = "Fake";
}

fn main() {}
