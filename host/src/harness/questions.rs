//! Before a reply without calls is taken as the answer: the harness's
//! questions, in order, each asked as often as its [`Nudge`] allows —
//! about a described call, about the call just before the answer (a
//! fixable error, a 4xx, a refusal), about a restated call, about what the
//! answer names, a supervisor's promise or forgotten piece, a worker's
//! return format — then the review, when the run has one.

use super::answer::{self, FIXABLE, Nudge};
use super::audit::record;
use super::outcome::{Outcome, Verdict};
use super::progress::Progress;
use super::repair::TextCall;
use super::report::Stop;
use super::state::RunState;
use super::{Harness, evidence};
use crate::agents;
use crate::model::Message;

/// A reply without calls, as [`Reply`](super::reply::Reply) read it.
pub(super) struct Answer {
    pub(super) message: Message,
    /// A call described in prose, to ask about.
    pub(super) described: Option<TextCall>,
    /// A call described in prose that already ran.
    pub(super) restated: Option<TextCall>,
    /// The model meant its description as the answer.
    pub(super) chose_answer: bool,
}

impl Harness<'_> {
    /// Takes `answer` as the run's, or sends a question back and goes on;
    /// the stop when the run ends here.
    pub(super) async fn answered(
        &mut self,
        run: &mut RunState,
        answer: Answer,
        progress: &dyn Progress,
    ) -> Option<Stop> {
        let question = self
            .about_last_call(run, &answer)
            .or_else(|| self.about_answer(run, &answer.message.content));
        let note = match question {
            Some(question) => Some(question),
            None => self.review_answer(run, &answer.message.content, progress).await,
        };
        if let Some(note) = note {
            run.conversation.push(answer.message);
            run.conversation.push(Message::user(note));
            return None;
        }
        run.answer = Some(self.audit.mask(&answer.message.content));
        run.conversation.push(answer.message);
        Some(Stop::Answered)
    }

    /// The question about the reply's own call or the call just before it,
    /// if one is due.
    fn about_last_call(&mut self, run: &mut RunState, answer: &Answer) -> Option<String> {
        let chose_answer = answer.chose_answer;
        if let Some(call) = &answer.described {
            // Prose that describes a call runs nothing (it is also
            // what an answer quoting a page looks like); the model is
            // asked once to make the call itself, or to answer.
            run.nudges.ask(Nudge::DescribedCall);
            run.pending = Some((call.clone(), answer.message.content.clone()));
            return Some(answer::describe_back(call));
        }
        // The call of the step just before this answer, with its result
        // (`actions` and `results` grow together).
        let just_ran =
            run.actions.last().filter(|a| a.step + 1 == run.steps).zip(run.results.last());
        let retry = run.nudges.left(Nudge::Retry) && !chose_answer;
        let fixable = just_ran
            .filter(|(a, _)| matches!(a.outcome, Outcome::Failed(code) if FIXABLE.contains(&code)));
        if let Some((failed, result)) = fixable.filter(|_| retry) {
            // A small model often gives up on the first error it
            // could fix; it is asked once to try again.
            let note = answer::retry_back(
                &failed.tool,
                failed.outcome.as_str(),
                &answer::error_text(result),
            );
            run.nudges.ask(Nudge::Retry);
            return Some(note);
        }
        let refused_request =
            just_ran.and_then(|(a, result)| Some((a, answer::client_error(result)?)));
        if let Some((call, status)) = refused_request.filter(|_| retry) {
            let note = answer::client_error_back(&call.tool, status);
            run.nudges.ask(Nudge::Retry);
            return Some(note);
        }
        let denied = just_ran.filter(|(a, _)| a.outcome == "DENIED");
        if let Some((refused, result)) =
            denied.filter(|_| run.nudges.left(Nudge::Denied) && !chose_answer)
        {
            // Reported as done what the sandbox refused is the worst
            // answer a run can give; the model is asked once to check.
            let note = answer::denied_back(&refused.tool, &answer::error_text(result));
            run.nudges.ask(Nudge::Denied);
            return Some(note);
        }
        if let Some(call) = answer.restated.as_ref().filter(|_| run.nudges.left(Nudge::Restate)) {
            // The model restated a call that ran instead of saying
            // what it found: asked once for the answer itself.
            run.nudges.ask(Nudge::Restate);
            return Some(answer::restate_back(call));
        }
        let unsupported =
            if chose_answer || run.actions.is_empty() || !run.nudges.left(Nudge::Evidence) {
                Vec::new()
            } else {
                evidence::unsupported(&answer.message.content, &run.task, &run.results)
            };
        if !unsupported.is_empty() {
            // An answer that names what no tool returned is a guess;
            // the model is asked once to check it or drop it.
            run.nudges.ask(Nudge::Evidence);
            let steps = run.steps;
            self.audit.record(record::AnswerQuestioned {
                step: steps,
                unsupported: Some(unsupported.clone()),
                ..Default::default()
            });
            return Some(answer::evidence_back(&unsupported));
        }
        None
    }

    /// The question about the answer itself as a supervisor's or a
    /// worker's, if one is due.
    fn about_answer(&mut self, run: &mut RunState, content: &str) -> Option<String> {
        let steps = run.steps;
        if self.toolbox.target(agents::DELEGATE).is_some()
            && self.delegated.is_empty()
            && run.nudges.left(Nudge::Promise)
            && agents::promises_delegation(
                content,
                &self.team.profiles().iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
            )
        {
            // A supervisor that announces a delegation and stops has
            // done nothing; it is told so once.
            run.nudges.ask(Nudge::Promise);
            self.audit.record(record::AnswerQuestioned {
                step: steps,
                promised_delegation: Some(true),
                ..Default::default()
            });
            return Some(agents::promise_back());
        }
        if self.only_delegates() && !self.delegated.is_empty() && run.nudges.left(Nudge::Pieces) {
            // A supervisor answering after the first piece came back
            // (the local model did, with the second piece undone) is
            // asked once whether any piece is left.
            run.nudges.ask(Nudge::Pieces);
            self.audit.record(record::AnswerQuestioned {
                step: steps,
                pieces_left: Some(true),
                ..Default::default()
            });
            return Some(answer::pieces_left(&run.task));
        }
        if let Some(format) = &self.answer_format
            && run.nudges.left(Nudge::Format)
            && let Err(errors) = agents::envelope::check_output(content, format)
        {
            // A worker's answer is data for its parent: once, it is
            // asked to put it in the format the parent asked for.
            run.nudges.ask(Nudge::Format);
            let note = agents::envelope::fix_back(&errors, format);
            self.audit.record(record::AnswerFormat { step: steps, errors: errors.clone() });
            return Some(note);
        }
        None
    }

    /// The review round of `content` when the run has one left; the
    /// reviewer's findings to send back on a first `revise`, which also
    /// gives the run one more round of `max_steps` requests.
    async fn review_answer(
        &mut self,
        run: &mut RunState,
        content: &str,
        progress: &dyn Progress,
    ) -> Option<String> {
        let criteria = self
            .config
            .review
            .clone()
            .filter(|_| self.scope.depth == 0 && run.reviews.len() < 2)?;
        let round = run.reviews.len() + 1;
        let review =
            self.review(round, &criteria, &run.task, content, &run.actions, progress).await;
        let revise = review.verdict == Some(Verdict::Revise) && run.reviews.is_empty();
        let note = answer::review_back(&review);
        run.reviews.push(review);
        if !revise {
            return None;
        }
        run.step_limit = run.steps + self.config.max_steps;
        Some(note)
    }
}
