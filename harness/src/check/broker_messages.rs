//! What the message checks (`distinct_keys`, `duplicates`, `consumer`) share: the brokers'
//! stored messages, grouped as a consumer of one topic would tell them apart.

use std::collections::BTreeMap;

use super::Ctx;
use crate::report::Finding;
use crate::trace::{Message, Name, seconds};

/// What tells a stored message from another of its topic: its key, else (a message sent
/// without one) the call that sent it, else nothing (a message no call can be found for).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Identity {
    /// The message's key.
    Key(Name),
    /// No key: the call it is attributed to.
    Call(u32),
    /// Neither: the message's position in the trace, so it groups with no other.
    Alone(usize),
}

/// The stored messages of each (topic, identity), in the order they were stored.
pub(super) fn groups<'t>(ctx: &Ctx<'t>) -> BTreeMap<(Name, Identity), Vec<&'t Message>> {
    let mut groups: BTreeMap<(Name, Identity), Vec<&Message>> = BTreeMap::new();
    for (i, m) in ctx.trace.messages.iter().enumerate() {
        let identity = match (m.key, m.call_id) {
            (Some(key), _) => Identity::Key(key),
            (None, Some(call)) => Identity::Call(call),
            (None, None) => Identity::Alone(i),
        };
        groups.entry((m.topic, identity)).or_default().push(m);
    }
    groups
}

/// The client of each call, to name and link a call a message is attributed to (a message
/// knows its call, not its client).
pub(super) struct Callers(BTreeMap<u32, u32>);

impl Callers {
    pub(super) fn new(ctx: &Ctx<'_>) -> Self {
        Callers(
            ctx.trace
                .calls
                .iter()
                .map(|c| (c.call_id, c.client_id))
                .collect(),
        )
    }

    /// A finding about `call`, which `text` is given the name of (`call 2`, or `client 1
    /// call 2` in a fleet). A call the trace does not list (no such call ran) is named by
    /// its id alone, and the finding is tied to no call.
    pub(super) fn finding(
        &self,
        ctx: &Ctx<'_>,
        call: u32,
        text: impl FnOnce(&str) -> String,
    ) -> Finding {
        match self.0.get(&call) {
            Some(&client) => Finding::call(client, call, text(&ctx.call_name(client, call))),
            None => Finding::from(text(&format!("call {call}"))),
        }
    }
}

/// `broker-1 at 0.003s`: how a verdict names a stored message.
pub(super) fn named(ctx: &Ctx<'_>, m: &Message) -> String {
    format!("{} at {}", ctx.trace.name(m.id), seconds(m.at_ms))
}

/// `broker-1 at 0.003s, broker-2 at 1.003s`.
pub(super) fn listed(ctx: &Ctx<'_>, messages: &[&Message]) -> String {
    messages
        .iter()
        .map(|m| named(ctx, m))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Sends that reached a broker's script: with none, no message could be stored or judged.
/// A request the broker refused itself (not a send: 404, or a bad body: 400) or that its
/// flow control turned away reached no step, so it is not one: a run whose every attempt
/// was refused says nothing about duplicates.
pub(super) fn sends(ctx: &Ctx<'_>) -> usize {
    ctx.ledgers
        .iter()
        .filter(|(name, _)| {
            ctx.scenario
                .endpoints
                .get(name)
                .is_some_and(|e| e.kind == crate::scenario::EndpointKind::Broker)
        })
        .map(|(_, ledger)| {
            // Both lists are in arrival order and disjoint (flow control answers first).
            ledger.requests.len() - ledger.refused.len() - ledger.rate_limited.len()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use crate::report::Judgement;
    use crate::scenario::{AtMostSpec, Scenario};

    /// (check, judgement, message) of each message check of a run of `yaml` with seed 0.
    fn verdicts(yaml: &str) -> Vec<(String, Judgement, String)> {
        let scenario = Scenario::from_yaml_str(yaml, "t.yaml").unwrap_or_else(|e| panic!("{e}"));
        let report = scenario.run_builtin_with_seed(0);
        report
            .verdicts()
            .iter()
            .filter(|v| {
                matches!(
                    v.check.as_str(),
                    "distinct_keys" | "duplicates" | "consumer"
                )
            })
            .map(|v| (v.check.clone(), v.judgement, v.message.clone()))
            .collect()
    }

    fn scenario(body: &str, calls: u32, connect: &str, expect: &str) -> String {
        format!(
            "version: 1\nname: t\nendpoints:\n  broker: {{ kind: broker, topics: [orders]{connect} }}\n\
             operation: {{ endpoint: broker, method: POST, path: /topics/orders/messages, \
             body: '{body}', calls: {calls} }}\n\
             client: no_retry\nexpect:\n{expect}"
        )
    }

    const ALL: &str = "  distinct_keys: true\n  duplicates: { at_most: 0 }\n  \
                       consumer: { idempotent_by: key }\n";

    /// Two sends that share a key: a duplicate by the key, and the consumer, idempotent by
    /// it, skips the second call's message, so that call's send is lost to it.
    #[test]
    fn two_calls_sharing_a_key_lose_the_second_to_the_consumer() {
        use Judgement::Failed;
        assert_eq!(
            verdicts(&scenario(r#"{"key": "o-1"}"#, 2, "", ALL)),
            [
                (
                    "distinct_keys".into(),
                    Failed,
                    "key o-1 was stored 2 times in topic orders (broker-1 at 0.000s, broker-2 at 0.000s)"
                        .into()
                ),
                (
                    "duplicates".into(),
                    Failed,
                    "1 duplicate, at most 0 allowed; key o-1 was stored 2 times in topic orders \
                     (broker-1 at 0.000s, broker-2 at 0.000s)"
                        .into()
                ),
                (
                    "consumer".into(),
                    Failed,
                    "call 1 succeeded but the consumer processed no message of it".into()
                ),
            ]
        );
    }

    /// Sends without a key, one per call: no duplicate (each call stored one), every
    /// message processed once, but no key tells them apart; `distinct_keys: false` says so.
    #[test]
    fn keyless_sends_one_per_call_are_no_duplicates() {
        use Judgement::Passed;
        let expect = "  distinct_keys: false\n  duplicates: { at_most: 0 }\n  \
                      consumer: { idempotent_by: none }\n";
        assert_eq!(
            verdicts(&scenario("{}", 2, "", expect)),
            [
                (
                    "distinct_keys".into(),
                    Passed,
                    "2 stored messages, not every one with a key of its own".into()
                ),
                (
                    "duplicates".into(),
                    Passed,
                    "0 duplicates among 2 stored messages (at most 0)".into()
                ),
                (
                    "consumer".into(),
                    Passed,
                    "a consumer idempotent by none processed 2 of 2 stored messages, one per \
                     call over 2 calls"
                        .into()
                ),
            ]
        );
        let wrong = verdicts(&scenario(
            r#"{"key": "o-1"}"#,
            1,
            "",
            "  distinct_keys: false\n",
        ));
        assert_eq!(
            wrong,
            [(
                "distinct_keys".into(),
                Judgement::Failed,
                "every one of the 1 stored messages has a key of its own".into()
            )]
        );
    }

    /// The summary lists the stored messages after the timeline; a run without a broker
    /// has no such section.
    #[test]
    fn the_summary_lists_stored_messages() {
        let yaml = scenario(r#"{"key": "o-1"}"#, 2, "", "  duplicates: { at_most: 1 }\n");
        let scenario = Scenario::from_yaml_str(&yaml, "t.yaml").unwrap_or_else(|e| panic!("{e}"));
        let summary = scenario.run_builtin_with_seed(0).summary();
        assert!(
            summary.ends_with(
                "messages:\n  t=0.000s  broker  orders  id broker-1  key o-1  call 0  attempt #1\n  \
                 t=0.000s  broker  orders  id broker-2  key o-1  call 1  attempt #1\n"
            ),
            "{summary}"
        );
        let plain = "version: 1\nname: t\nendpoints: { api: {} }\noperation: { endpoint: api }\n";
        let plain = Scenario::from_yaml_str(plain, "t.yaml").unwrap_or_else(|e| panic!("{e}"));
        let report = plain.run_builtin_with_seed(0);
        assert!(!report.summary().contains("messages:"));
        assert!(!report.snapshot_text().contains("messages:"));
    }

    /// Requests the broker refused itself reached no step: a run whose every attempt got
    /// its 400 (a body that is not JSON) or its 404 (a topic it does not have) has no send,
    /// and is not judged rather than passed with "0 duplicates among 0 stored messages".
    #[test]
    fn refused_requests_are_no_sends() {
        let expect = "  duplicates: { at_most: 0 }\n  consumer: { idempotent_by: key }\n";
        let wrong_topic = scenario("{}", 2, "", expect).replace(
            "path: /topics/orders/messages",
            "path: /topics/payments/messages",
        );
        for (yaml, status) in [
            (scenario("not json", 2, "", expect), 400),
            (wrong_topic, 404),
        ] {
            // The timeline says who answered.
            let parsed = Scenario::from_yaml_str(&yaml, "t.yaml").unwrap_or_else(|e| panic!("{e}"));
            let timeline = parsed.run_builtin_with_seed(0).trace().timeline();
            assert_eq!(
                timeline
                    .matches(&format!("-> {status} (refused by the broker)"))
                    .count(),
                2,
                "{timeline}"
            );
            let judged: Vec<_> = verdicts(&yaml)
                .into_iter()
                .map(|(check, judgement, _)| (check, judgement))
                .collect();
            assert_eq!(
                judged,
                [
                    ("duplicates".into(), Judgement::NotJudged),
                    ("consumer".into(), Judgement::NotJudged),
                ],
                "{yaml}"
            );
        }
    }

    /// The summary shows the first messages as it shows the first timeline lines, and
    /// counts the rest; each line still names its call's attempt.
    #[test]
    fn the_summary_shows_the_first_messages_and_counts_the_rest() {
        let yaml = scenario("{}", 62, "", "  duplicates: { at_most: 0 }\n");
        let scenario = Scenario::from_yaml_str(&yaml, "t.yaml").unwrap_or_else(|e| panic!("{e}"));
        let report = scenario.run_builtin_with_seed(0);
        let summary = report.summary();
        let shown: Vec<&str> = summary
            .lines()
            .skip_while(|line| *line != "messages:")
            .skip(1)
            .collect();
        assert_eq!(shown.len(), 61, "{summary}");
        assert_eq!(
            shown[59],
            "  t=0.000s  broker  orders  id broker-60  no key  call 59  attempt #1"
        );
        assert_eq!(shown[60], "  ... 2 more messages");
        assert_eq!(report.trace().message_lines().len(), 62);
    }

    /// A keyless message's finding names and links the client of its call (a fleet's
    /// second client, here, by editing the trace: fleets are not run yet).
    #[test]
    fn keyless_findings_name_the_client_of_their_call() {
        let yaml = scenario("{}", 2, "", "  distinct_keys: true\n");
        let findings = super::super::with_edited_report(
            &yaml,
            |report| report.trace.calls[1].client_id = 1,
            |ctx| {
                let keyless = super::super::distinct_keys::check(ctx, true).findings;
                let duplicates = super::super::duplicates::check(ctx, AtMostSpec { at_most: 0 });
                (keyless, duplicates)
            },
        );
        let keyless: Vec<_> = findings
            .0
            .iter()
            .map(|f| (f.call.map(|c| (c.client, c.call)), f.message.as_str()))
            .collect();
        assert_eq!(
            keyless,
            [
                (
                    Some((0, 0)),
                    "call 0: broker-1 at 0.000s in topic orders has no key"
                ),
                (
                    Some((1, 1)),
                    "client 1 call 1: broker-2 at 0.000s in topic orders has no key"
                ),
            ]
        );
        // One message per call: no duplicate.
        assert_eq!(findings.1.judgement, Judgement::Passed);
        let twice = super::super::with_edited_report(
            &yaml,
            |report| {
                report.trace.calls[1].client_id = 1;
                report.trace.messages[0].call_id = Some(1);
            },
            |ctx| super::super::duplicates::check(ctx, AtMostSpec { at_most: 0 }),
        );
        let calls: Vec<_> = twice
            .findings
            .iter()
            .map(|f| f.call.map(|c| (c.client, c.call)))
            .collect();
        assert_eq!(calls, [None, Some((1, 1))]);
        assert!(
            twice.message.ends_with(
                "client 1 call 1 stored 2 messages without a key in topic orders \
                 (broker-1 at 0.000s, broker-2 at 0.000s)"
            ),
            "{}",
            twice.message
        );
    }

    /// A keyless message tied to no call cannot be told from a duplicate: `duplicates`
    /// reports it instead of passing over it.
    #[test]
    fn an_unattributed_keyless_message_is_reported() {
        let yaml = scenario("{}", 2, "", "  duplicates: { at_most: 0 }\n");
        let verdict = super::super::with_edited_report(
            &yaml,
            |report| report.trace.messages[1].call_id = None,
            |ctx| super::super::duplicates::check(ctx, AtMostSpec { at_most: 0 }),
        );
        assert_eq!(verdict.judgement, Judgement::Failed);
        assert_eq!(
            verdict.message,
            "1 stored message without a key could not be attributed to a call, so whether \
             it is a duplicate cannot be told"
        );
    }

    /// With no send reaching a broker (every connect refused), nothing is judged.
    #[test]
    fn no_send_is_not_judged() {
        let refused = ", connect: [ { action: refuse } ]";
        let judged: Vec<_> = verdicts(&scenario("{}", 1, refused, ALL))
            .into_iter()
            .map(|(check, judgement, _)| (check, judgement))
            .collect();
        assert_eq!(
            judged,
            [
                ("distinct_keys".into(), Judgement::NotJudged),
                ("duplicates".into(), Judgement::NotJudged),
                ("consumer".into(), Judgement::NotJudged),
            ]
        );
    }
}
