//! The layer's `locals` option: JVMTI's can_access_local_variables (about 10% CPU while held) is taken only
//! when the agent needs it. EventProbe (java/native/jvmpi/EventProbe.c) with "entry2=late" enables
//! METHOD_ENTRY2 at JVM_INIT_DONE, after the OnLoad phase: with locals=auto and the agent loaded by the layer,
//! the capability is left out and METHOD_ENTRY2 answers JVMPI_NOT_AVAILABLE; locals=y keeps the receivers;
//! locals=n leaves it out even for an -Xrun agent that enables METHOD_ENTRY2 at load. (locals=auto taking it
//! when the agent enables METHOD_ENTRY2 in JVM_OnLoad is events.rs.)

mod support;

use jvm_harness::{all_jdks, scratch};
use support::{Loading, build_agent, java_with_layer_options};

struct Case {
    loading: Loading,
    layer_options: &'static str,
    agent_options: &'static str,
    /// The verbose line's verdict and reason.
    verdict: &'static str,
    enable: &'static str,
    /// The ENTRY2 line at shutdown.
    entry2: &'static str,
}

const CASES: [Case; 3] = [
    Case {
        loading: Loading::ByLayer,
        layer_options: "verbose=y",
        agent_options: "entry2=late",
        verdict: "left out (locals=auto: the agent did not enable METHOD_ENTRY2 in JVM_OnLoad",
        enable: "ENTRY2_ENABLE at=init rc=NOT_AVAILABLE\n",
        entry2: "ENTRY2 touch=0 same_receiver=1 stat=0 null_receiver=1\n",
    },
    Case {
        loading: Loading::ByLayer,
        layer_options: "locals=y,verbose=y",
        agent_options: "entry2=late",
        verdict: "taken (locals=y)",
        enable: "ENTRY2_ENABLE at=init rc=SUCCESS\n",
        entry2: "ENTRY2 touch=100 same_receiver=1 stat=100 null_receiver=1\n",
    },
    Case {
        loading: Loading::Xrun,
        layer_options: "locals=n,verbose=y",
        agent_options: "",
        verdict: "left out (locals=n)",
        enable: "ENTRY2_ENABLE at=load rc=NOT_AVAILABLE\n",
        entry2: "ENTRY2 touch=0 same_receiver=1 stat=0 null_receiver=1\n",
    },
];

#[test]
fn local_variable_access_is_taken_only_when_wanted() {
    let build = scratch("jvmpi-locals-build");
    let lib = build_agent("EventProbe", build.path());
    for jdk in all_jdks() {
        for case in &CASES {
            let what = format!("JDK {} {:?} {} {}", jdk.version, case.loading, case.layer_options, case.agent_options);
            let dir = scratch("jvmpi-locals");
            let run =
                java_with_layer_options(&jdk, dir.path(), &lib, case.agent_options, case.loading, case.layer_options)
                    .class("JvmpiEvents")
                    .run();
            run.assert_success();
            let (out, err) = (&run.stdout, &run.stderr);
            assert!(!out.contains("ERROR"), "{what}:\n{out}");
            assert!(out.contains("touched=100 stat=100"), "{what}: the program ran:\n{out}");
            let verbose = err
                .lines()
                .find(|l| l.starts_with("JVMPI: can_access_local_variables "))
                .unwrap_or_else(|| panic!("{what}: no verbose line:\n{err}"));
            assert!(verbose.contains(case.verdict), "{what}: {verbose}");
            let held = verbose.split("capabilities held:").nth(1).unwrap_or_default();
            assert_eq!(
                held.contains(" can_access_local_variables"),
                case.verdict.starts_with("taken"),
                "{what}: {verbose}"
            );
            assert!(held.contains(" can_tag_objects"), "{what}: the other capabilities are listed: {verbose}");
            assert!(out.contains(case.enable), "{what}:\n{out}");
            assert!(out.contains(case.entry2), "{what}:\n{out}");
            if case.enable.contains("NOT_AVAILABLE") {
                assert!(err.contains("give the layer locals=y"), "{what}: the refusal says what to do:\n{err}");
            }
            // The rest of the agent's events are unaffected.
            assert!(out.contains("EXIT touch=100 stat=100\n"), "{what}:\n{out}");
        }
    }
}
