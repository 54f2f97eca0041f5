//! `confirm`-level tools over MCP: the person is asked through the
//! client's elicitation. Clients on protocol 2026-07-28 or later are asked
//! with an `InputRequiredResult` (the client retries the call with the
//! answer); older ones with an `elicitation/create` request on their session.
//! A client that cannot ask anyone gets a refusal saying so.

use crate::CheckedCall;
use crate::host::confirmation_prompt;
use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, InputRequest,
    InputRequests, InputRequiredResult, ProtocolVersion,
};
use rmcp::service::RequestContext;
use std::collections::BTreeMap;
use std::time::Duration;

/// Key of our one input request in an `InputRequiredResult`.
const INPUT_KEY: &str = "confirm";

/// How long a person has to answer an `elicitation/create` request.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(600);

/// What asking the person came to.
pub enum Answer {
    /// The person allowed the call.
    Confirmed,
    /// Not allowed; the reason is shown to the client.
    Refused(String),
    /// Return this to the client, which asks and calls again.
    Ask(InputRequiredResult),
}

/// Seals the `requestState` of a confirmation so that a retried call is run
/// only with the arguments the person was shown. Keyed per process, or by
/// `REACH_MCP_STATE_KEY` so instances behind a load balancer accept each
/// other's states.
pub struct StateKey([u8; 32]);

impl StateKey {
    /// A key from `REACH_MCP_STATE_KEY` when set (any string; derived with
    /// BLAKE3), else random.
    pub fn from_env() -> StateKey {
        match std::env::var("REACH_MCP_STATE_KEY") {
            Ok(secret) if !secret.is_empty() => StateKey(blake3::derive_key("agent-reach mcp request state v1", secret.as_bytes())),
            _ => {
                let mut key = [0u8; 32];
                // Random bytes from the kernel; on failure fall back to a
                // key no client can know either (time and address based).
                if rustix::rand::getrandom(&mut key, rustix::rand::GetRandomFlags::empty()).is_err() {
                    let seed = format!("{:?}{:p}", std::time::SystemTime::now(), &key);
                    key = blake3::hash(seed.as_bytes()).into();
                }
                StateKey(key)
            }
        }
    }

    fn seal(&self, call: &CheckedCall) -> String {
        let mut hasher = blake3::Hasher::new_keyed(&self.0);
        hasher.update(call.skill().as_bytes()).update(b"\0").update(call.tool().as_bytes()).update(b"\0");
        hasher.update(call.value().to_string().as_bytes());
        hasher.finalize().to_hex().to_string()
    }
}

/// Ask the person behind the client whether `call` may run.
pub async fn ask(call: &CheckedCall, params: &CallToolRequestParams, context: &RequestContext<RoleServer>, key: &StateKey) -> Answer {
    let can_ask = context.client_capabilities().and_then(|caps| caps.elicitation).is_some();
    if !can_ask {
        return Answer::Refused(
            "this MCP client cannot ask a person (it does not support elicitation); use a client that does, \
             or ask the operator to set the tool's level to \"auto\" in the permission table"
                .to_owned(),
        );
    }
    let message = confirmation_prompt(call.skill(), call.tool(), call.value());
    let stateless = context.protocol_version().is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
    if stateless {
        return ask_by_retry(call, params, message, key);
    }
    let request = form(message);
    tokio::select! {
        answer = context.peer.create_elicitation_with_timeout(request, Some(ANSWER_TIMEOUT)) => match answer {
            Ok(result) => decided(&result),
            Err(err) => Answer::Refused(format!("the client did not answer the confirmation request ({err})")),
        },
        () = context.ct.cancelled() => Answer::Refused("the call was cancelled while waiting for confirmation".to_owned()),
    }
}

/// Protocol 2026-07-28: the first call gets the question back; the retry
/// carries the answer and the sealed state naming these very arguments.
fn ask_by_retry(call: &CheckedCall, params: &CallToolRequestParams, message: String, key: &StateKey) -> Answer {
    let state = key.seal(call);
    let answered = params.request_state.as_deref() == Some(state.as_str());
    if let (true, Some(responses)) = (answered, &params.input_responses)
        && let Some(response) = responses.get(INPUT_KEY)
    {
        return match serde_json::from_value::<ElicitResult>(response.clone()) {
            Ok(result) => decided(&result),
            Err(err) => Answer::Refused(format!("the client's answer to the confirmation request is not an elicitation result: {err}")),
        };
    }
    if params.input_responses.is_some() && !answered {
        tracing::warn!(skill = %call.skill(), tool = %call.tool(), "a confirmation answer came with a request state that does not match these arguments: asking again");
    }
    let mut requests = InputRequests::new();
    requests.insert(INPUT_KEY.to_owned(), InputRequest::Elicitation(ElicitRequest::new(form(message))));
    Answer::Ask(InputRequiredResult::new(Some(requests), Some(state)))
}

/// A form elicitation with nothing to fill in: accept or decline.
fn form(message: String) -> ElicitRequestParams {
    ElicitRequestParams::FormElicitationParams { meta: None, message, requested_schema: ElicitationSchema::new(BTreeMap::new()) }
}

fn decided(result: &ElicitResult) -> Answer {
    match result.action {
        ElicitationAction::Accept => Answer::Confirmed,
        ElicitationAction::Decline => Answer::Refused("the person declined".to_owned()),
        _ => Answer::Refused("the person cancelled the confirmation".to_owned()),
    }
}
