//! `confirm`-level tools over MCP: the person is asked through the
//! client's elicitation. Clients on protocol 2026-07-28 or later are asked
//! with an `InputRequiredResult` (the client retries the call with the
//! answer, and the retry's sealed state is good for one call, for the client
//! asked, for a limited time: [`super::approvals`]); older ones with an
//! `elicitation/create` request on their session. A client that cannot ask
//! anyone gets a refusal saying so.

use super::approvals::{Approvals, Client, Subject, Verdict};
use crate::CheckedCall;
use crate::host::confirmation_prompt;
use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequests, InputRequiredResult, ProtocolVersion,
};
use rmcp::service::RequestContext;
use std::collections::BTreeMap;
use std::time::Duration;

/// Key of our one input request in an `InputRequiredResult`.
const INPUT_KEY: &str = "confirm";

/// How long a person has to answer an `elicitation/create` request: as
/// long as a retried answer is good for, the same time both ways.
const ANSWER_TIMEOUT: Duration = super::approvals::STATE_TTL;

/// What asking the person came to.
pub enum Answer {
    /// The person allowed the call.
    Confirmed,
    /// Not allowed; the reason is shown to the client.
    Refused(String),
    /// Return this to the client, which asks and calls again.
    Ask(InputRequiredResult),
}

/// Ask the person behind the client whether `call` may run.
pub async fn ask(
    call: &CheckedCall,
    params: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    approvals: &Approvals,
) -> Answer {
    let can_ask = context.client_capabilities().and_then(|caps| caps.elicitation).is_some();
    if !can_ask {
        return Answer::Refused(
            "this MCP client cannot ask a person (it does not support elicitation); use a client \
             that does, or ask the operator to set the tool's level to \"auto\" in the permission \
             table"
                .to_owned(),
        );
    }
    let message = confirmation_prompt(call.skill(), call.tool(), call.value());
    let stateless = context.protocol_version().is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
    if stateless {
        return ask_by_retry(call, params, message, context, approvals).await;
    }
    let request = form(message);
    tokio::select! {
        answer = context.peer.create_elicitation_with_timeout(request, Some(ANSWER_TIMEOUT)) => {
            match answer {
                Ok(result) => decided(&result),
                Err(err) => Answer::Refused(format!(
                    "the client did not answer the confirmation request ({err})"
                )),
            }
        }
        () = context.ct.cancelled() => {
            Answer::Refused("the call was cancelled while waiting for confirmation".to_owned())
        }
    }
}

/// Protocol 2026-07-28: the first call gets the question back; the retry
/// carries the answer and the sealed state naming these very arguments, the
/// client asked and an expiry. A state is good for one call: the first
/// accepted use is recorded, any other refused.
async fn ask_by_retry(
    call: &CheckedCall,
    params: &CallToolRequestParams,
    message: String,
    context: &RequestContext<RoleServer>,
    approvals: &Approvals,
) -> Answer {
    let subject = Subject { skill: call.skill(), tool: call.tool(), arguments: call.value() };
    let name = context.client_info().map(|info| info.name);
    let parts = context.extensions.get::<http::request::Parts>();
    let header = |name: &str| parts.and_then(|p| p.headers.get(name)).map(|v| v.as_bytes());
    // The token, however the scheme was spelt (the server accepts both).
    let token = header("authorization").map(|v| {
        v.strip_prefix(b"Bearer ").or_else(|| v.strip_prefix(b"bearer ")).unwrap_or(v).trim_ascii()
    });
    let client = Client {
        authorization: token,
        session: header("mcp-session-id"),
        http: parts.is_some(),
        name: name.as_deref(),
    };
    let answered = params.input_responses.as_ref().and_then(|responses| responses.get(INPUT_KEY));
    if let (Some(state), Some(response)) = (params.request_state.as_deref(), answered) {
        let spendable = match approvals.verify(state, &subject, &client) {
            Verdict::Valid(spendable) => spendable,
            Verdict::OtherClient => {
                return Answer::Refused(
                    "this answer was given to the question of another client (or session); each \
                     client must be asked itself: call again without it"
                        .to_owned(),
                );
            }
            Verdict::Expired => {
                return Answer::Refused(format!(
                    "the answer came more than {} minutes after the question; call again to ask \
                     the person again",
                    super::approvals::STATE_TTL.as_secs() / 60
                ));
            }
            Verdict::NotForThis => {
                tracing::warn!(
                    skill = %call.skill(),
                    tool = %call.tool(),
                    "a confirmation answer came with a request state that is not for these \
                     arguments: asking again"
                );
                return question(message, approvals.seal(&subject, &client));
            }
        };
        let result = match serde_json::from_value::<ElicitResult>(response.clone()) {
            Ok(result) => result,
            Err(err) => {
                return Answer::Refused(format!(
                    "the client's answer to the confirmation request is not an elicitation result: \
                     {err}"
                ));
            }
        };
        let answer = decided(&result);
        if !matches!(answer, Answer::Confirmed) {
            return answer;
        }
        return match approvals.spend(spendable).await {
            Ok(true) => Answer::Confirmed,
            Ok(false) => Answer::Refused(
                "this answer was already used: each \"accept\" allows one call; call again to ask \
                 the person again"
                    .to_owned(),
            ),
            Err(err) => Answer::Refused(err.to_string()),
        };
    }
    if params.input_responses.is_some() {
        tracing::warn!(
            skill = %call.skill(),
            tool = %call.tool(),
            "a confirmation answer came without a request state: asking again"
        );
    }
    question(message, approvals.seal(&subject, &client))
}

fn question(message: String, state: String) -> Answer {
    let mut requests = InputRequests::new();
    requests
        .insert(INPUT_KEY.to_owned(), InputRequest::Elicitation(ElicitRequest::new(form(message))));
    Answer::Ask(InputRequiredResult::new(Some(requests), Some(state)))
}

/// A form elicitation with nothing to fill in: accept or decline.
fn form(message: String) -> ElicitRequestParams {
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: ElicitationSchema::new(BTreeMap::new()),
    }
}

fn decided(result: &ElicitResult) -> Answer {
    match result.action {
        ElicitationAction::Accept => Answer::Confirmed,
        ElicitationAction::Decline => Answer::Refused("the person declined".to_owned()),
        _ => Answer::Refused("the person cancelled the confirmation".to_owned()),
    }
}
