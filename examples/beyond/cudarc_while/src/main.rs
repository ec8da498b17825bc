//! `cudarc_while [--n N] [--repeats R] [--nvrtc]`: the Collatz loop on cudarc alone (host
//! driven) and as a cuda-graph WHILE graph, both checked against the CPU and timed.

fn main() {
    let mut config = cudarc_while::Config { n: 1_000_000, repeats: 5, nvrtc: false };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut number = |name: &str| -> u32 {
            let value = args.next().unwrap_or_else(|| usage(&format!("{name} needs a value")));
            value.parse().unwrap_or_else(|_| usage(&format!("{name} {value}: not a number")))
        };
        match arg.as_str() {
            "--n" => config.n = number("--n"),
            "--repeats" => config.repeats = number("--repeats"),
            "--nvrtc" => config.nvrtc = true,
            other => usage(&format!("unknown argument {other}")),
        }
    }
    match cudarc_while::run(&config) {
        Ok(report) => println!("{report}"),
        Err(err) => {
            eprintln!("cudarc_while: {err}");
            std::process::exit(1);
        }
    }
}

fn usage(problem: &str) -> ! {
    eprintln!("cudarc_while: {problem}\nusage: cudarc_while [--n N] [--repeats R] [--nvrtc]");
    std::process::exit(2);
}
