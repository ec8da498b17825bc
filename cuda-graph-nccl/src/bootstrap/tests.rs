//! The launchers' variables, and the errors for missing or inconsistent ones.

use std::time::Duration;

use super::*;

fn launch(vars: &[(&str, &str)]) -> Result<Launch, BootstrapError> {
    Launch::from_vars(|name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string()))
}

const MASTER: [(&str, &str); 2] = [("MASTER_ADDR", "node-0"), ("MASTER_PORT", "29500")];

/// Variables, the launcher they name, and the rank they give.
type Case<'a> = (&'a [(&'a str, &'a str)], Launcher, RankInfo);

#[test]
fn torchrun_mpirun_and_srun_forms_give_the_rank() {
    let cases: [Case; 3] = [
        (
            &[("RANK", "3"), ("WORLD_SIZE", "8"), ("LOCAL_RANK", "1")],
            Launcher::Torchrun,
            RankInfo { rank: 3, world_size: 8, local_rank: 1 },
        ),
        (
            &[
                ("OMPI_COMM_WORLD_RANK", "5"),
                ("OMPI_COMM_WORLD_SIZE", "6"),
                ("OMPI_COMM_WORLD_LOCAL_RANK", "2"),
            ],
            Launcher::OpenMpi,
            RankInfo { rank: 5, world_size: 6, local_rank: 2 },
        ),
        (
            &[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "4"), ("SLURM_LOCALID", "0")],
            Launcher::Slurm,
            RankInfo { rank: 0, world_size: 4, local_rank: 0 },
        ),
    ];
    for (vars, launcher, rank) in cases {
        let all: Vec<(&str, &str)> = vars.iter().copied().chain(MASTER).collect();
        let got = launch(&all).unwrap();
        assert_eq!((got.launcher, got.rank), (launcher, rank), "{vars:?}");
        assert_eq!(got.address(), "node-0:29500");
        assert_eq!(got.timeout, DEFAULT_BOOTSTRAP_TIMEOUT);
        let meeting = got.rendezvous();
        assert_eq!((meeting.rank, meeting.world_size), (rank.rank, rank.world_size));
    }
}

#[test]
fn torchrun_variables_win_over_slurms() {
    let vars = [
        ("SLURM_PROCID", "7"),
        ("SLURM_NTASKS", "8"),
        ("SLURM_LOCALID", "3"),
        ("RANK", "1"),
        ("WORLD_SIZE", "2"),
        ("LOCAL_RANK", "0"),
        MASTER[0],
        MASTER[1],
    ];
    let got = launch(&vars).unwrap();
    assert_eq!((got.launcher, got.rank.rank, got.rank.world_size), (Launcher::Torchrun, 1, 2));
}

#[test]
fn missing_and_inconsistent_variables_are_named() {
    assert_eq!(launch(&MASTER), Err(BootstrapError::NotLaunched));
    let cases: Vec<(Vec<(&str, &str)>, BootstrapError)> = vec![
        (
            vec![("RANK", "0"), ("LOCAL_RANK", "0"), MASTER[0], MASTER[1]],
            BootstrapError::MissingVariable { name: "WORLD_SIZE", launcher: Some(Launcher::Torchrun) },
        ),
        (
            vec![("SLURM_PROCID", "0"), ("SLURM_NTASKS", "2"), MASTER[0], MASTER[1]],
            BootstrapError::MissingVariable { name: "SLURM_LOCALID", launcher: Some(Launcher::Slurm) },
        ),
        (
            vec![("RANK", "0"), ("WORLD_SIZE", "2"), ("LOCAL_RANK", "0"), MASTER[1]],
            BootstrapError::MissingVariable { name: "MASTER_ADDR", launcher: Some(Launcher::Torchrun) },
        ),
        (
            vec![("RANK", "0"), ("WORLD_SIZE", "2"), ("LOCAL_RANK", "0"), MASTER[0]],
            BootstrapError::MissingVariable { name: "MASTER_PORT", launcher: Some(Launcher::Torchrun) },
        ),
        (
            vec![("RANK", "two"), ("WORLD_SIZE", "2"), ("LOCAL_RANK", "0"), MASTER[0], MASTER[1]],
            BootstrapError::BadVariable {
                name: "RANK",
                value: "two".into(),
                expected: "a whole number, not negative",
            },
        ),
        (
            vec![("RANK", "-1"), ("WORLD_SIZE", "2"), ("LOCAL_RANK", "0"), MASTER[0], MASTER[1]],
            BootstrapError::BadVariable {
                name: "RANK",
                value: "-1".into(),
                expected: "a whole number, not negative",
            },
        ),
        (
            vec![
                ("OMPI_COMM_WORLD_RANK", "2"),
                ("OMPI_COMM_WORLD_SIZE", "2"),
                ("OMPI_COMM_WORLD_LOCAL_RANK", "0"),
            ]
            .into_iter()
            .chain(MASTER)
            .collect(),
            BootstrapError::RankOutOfRange { name: "OMPI_COMM_WORLD_RANK", value: 2, world_size: 2 },
        ),
        (
            vec![("RANK", "0"), ("WORLD_SIZE", "2"), ("LOCAL_RANK", "4"), MASTER[0], MASTER[1]],
            BootstrapError::RankOutOfRange { name: "LOCAL_RANK", value: 4, world_size: 2 },
        ),
        (
            vec![("RANK", "0"), ("WORLD_SIZE", "0"), ("LOCAL_RANK", "0"), MASTER[0], MASTER[1]],
            BootstrapError::BadVariable {
                name: "WORLD_SIZE",
                value: "0".into(),
                expected: "at least 1 rank",
            },
        ),
        (
            vec![
                ("RANK", "0"),
                ("WORLD_SIZE", "2"),
                ("LOCAL_RANK", "0"),
                MASTER[0],
                ("MASTER_PORT", "70000"),
            ],
            BootstrapError::BadVariable {
                name: "MASTER_PORT",
                value: "70000".into(),
                expected: "a TCP port, 1 to 65535",
            },
        ),
        (
            vec![
                ("RANK", "0"),
                ("WORLD_SIZE", "2"),
                ("LOCAL_RANK", "0"),
                MASTER[0],
                MASTER[1],
                (BOOTSTRAP_TIMEOUT_VAR, "soon"),
            ],
            BootstrapError::BadVariable {
                name: BOOTSTRAP_TIMEOUT_VAR,
                value: "soon".into(),
                expected: "a number of seconds (e.g. 120, 2.5, inf)",
            },
        ),
    ];
    for (vars, want) in cases {
        let got = launch(&vars);
        assert_eq!(got.as_ref().err(), Some(&want), "{vars:?}");
        let text = want.to_string();
        let named = match &want {
            BootstrapError::MissingVariable { name, .. }
            | BootstrapError::BadVariable { name, .. }
            | BootstrapError::RankOutOfRange { name, .. } => *name,
            _ => unreachable!(),
        };
        assert!(text.contains(named), "{text}");
    }
}

#[test]
fn under_torchruns_agent_store_the_rendezvous_takes_the_next_port() {
    let torchrun = [("RANK", "0"), ("WORLD_SIZE", "2"), ("LOCAL_RANK", "0"), MASTER[0], MASTER[1]];
    let with = |extra: &[(&'static str, &'static str)]| {
        let vars: Vec<(&str, &str)> = torchrun.iter().copied().chain(extra.iter().copied()).collect();
        launch(&vars)
    };
    assert_eq!(with(&[]).unwrap().master_port, 29500);
    assert_eq!(with(&[("TORCHELASTIC_USE_AGENT_STORE", "False")]).unwrap().master_port, 29500);
    assert_eq!(with(&[("TORCHELASTIC_USE_AGENT_STORE", "True")]).unwrap().master_port, 29501);
    let chosen = with(&[("TORCHELASTIC_USE_AGENT_STORE", "True"), (RENDEZVOUS_PORT_VAR, "40000")]).unwrap();
    assert_eq!(chosen.address(), "node-0:40000");
    assert_eq!(
        with(&[(RENDEZVOUS_PORT_VAR, "0")]),
        Err(BootstrapError::BadVariable {
            name: RENDEZVOUS_PORT_VAR,
            value: "0".into(),
            expected: "a TCP port, 1 to 65535"
        })
    );
}

#[test]
fn timeout_and_ipv6_addresses_are_read() {
    let vars = [
        ("RANK", "0"),
        ("WORLD_SIZE", "1"),
        ("LOCAL_RANK", "0"),
        ("MASTER_ADDR", "::1"),
        ("MASTER_PORT", "1234"),
        (BOOTSTRAP_TIMEOUT_VAR, "2.5"),
    ];
    let got = launch(&vars).unwrap();
    assert_eq!(got.timeout, Duration::from_millis(2500));
    assert_eq!(got.address(), "[::1]:1234");
}

#[test]
fn a_world_of_one_shares_without_a_socket() {
    let meeting = Rendezvous {
        address: "256.0.0.1:1".into(), // not an address: never used
        rank: 0,
        world_size: 1,
        timeout: Duration::from_millis(10),
    };
    assert_eq!(meeting.share(|| vec![7; 128]).unwrap(), vec![7; 128]);
}

#[test]
fn ranks_outside_the_world_are_refused_before_any_socket() {
    let meeting =
        Rendezvous { address: "127.0.0.1:1".into(), rank: 3, world_size: 2, timeout: Duration::ZERO };
    assert_eq!(meeting.join(), Err(BootstrapError::RankOutOfRange { name: "rank", value: 3, world_size: 2 }));
    let root = Rendezvous { rank: 0, ..meeting };
    assert_eq!(
        root.serve(&vec![0; MAX_PAYLOAD + 1]),
        Err(BootstrapError::PayloadTooLarge { len: MAX_PAYLOAD + 1 })
    );
}

/// A port that was free a moment ago, on the loopback interface.
fn free_address() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().to_string()
}

#[test]
fn a_stranger_on_the_port_is_refused_by_rank_zero_naming_it() {
    use std::io::{Read, Write};
    let address = free_address();
    let root =
        Rendezvous { address: address.clone(), rank: 0, world_size: 2, timeout: Duration::from_secs(20) };
    let serving = std::thread::spawn(move || root.serve(&[1; 128]));
    let mut stranger = loop {
        match std::net::TcpStream::connect(&address) {
            Ok(stream) => break stream,
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    };
    // Exactly a hello's length (more, left unread, would make rank 0's close a reset).
    stranger.write_all(b"GET / HTTP/1.1\r\nHost: xy\r\n\r\n").unwrap();
    let err = serving.join().unwrap().unwrap_err();
    let BootstrapError::BadHello { from, why } = &err else { panic!("{err:?}") };
    assert_eq!(from, &stranger.local_addr().unwrap().to_string());
    assert!(why.contains("magic"), "{why}");
    // The stranger is told why, in the rendezvous's framing.
    let mut answer = Vec::new();
    stranger.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = stranger.read_to_end(&mut answer);
    assert_eq!(&answer[..8], &MAGIC);
    assert_eq!(answer[8], 1, "refused");
}

#[test]
fn a_rank_zero_that_never_answers_is_silence_named_in_time() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let meeting =
        Rendezvous { address: address.clone(), rank: 1, world_size: 2, timeout: Duration::from_millis(300) };
    let start = std::time::Instant::now();
    let err = meeting.join().unwrap_err();
    let took = start.elapsed();
    let BootstrapError::Silent { address: named, waited } = &err else { panic!("{err:?}") };
    assert_eq!(named, &address);
    assert!(*waited >= Duration::from_millis(300), "{waited:?}");
    assert!(took < Duration::from_secs(15), "took {took:?}: the timeout and its grace are 5.3 s");
    assert!(
        err.to_string().starts_with(&format!("connected to rank 0 at {address} but it sent nothing in")),
        "{err}"
    );
    drop(listener);
}
