// Package fakemodel is a scripted stand-in for the Anthropic Messages API,
// the OpenAI Responses API and OpenAI Chat Completions (/v1/chat/completions,
// streamed as "data:" chunks ending with [DONE], or whole), so the real
// Claude Code and Codex TUIs, and hosts that speak any of the three, can run
// against it on loopback, with no network and no real model.
//
// One Server serves any number of agents at once: what it answers is chosen by
// a marker in the text of the latest user turn, so each test types the
// scenario it wants, as a human would type a task.
//
// # Markers
//
// A marker is written anywhere in the user's message:
//
//	[[akk:<scenario> key=value key="quoted value" ...]]
//
// Scenarios:
//
//	reply   (also the default, without a marker) a plain final answer.
//	        text="..." sets it; otherwise it is "Fake model reply <token>."
//	        where <token> is ReplyToken(user text), so a test can find it
//	        on the screen and in the transcript.
//	slow    secs=N (default 5), lead=true|false (default true): a reply
//	        that takes N seconds: a first word ("slow-1") at once, then quiet
//	        (keep-alives only) for half the time, then the rest word by word.
//	        lead=false leaves out the first word, so the TUI shows only its
//	        working indicator at first (Codex 0.169.0 hides that indicator
//	        once answer text streams; Claude Code puts the prompt back in the
//	        composer when Esc comes before any answer text).
//	bash    cmd="..." (default DefaultBashCommand): a shell tool call that
//	        needs the human's approval. Claude: a Bash tool_use. Codex: an
//	        exec_command call with sandbox_permissions "require_escalated"
//	        and a justification.
//	ask     questions=N (1 to 3, default 1), multi=true|false (Claude only,
//	        default false): a questionnaire. Claude: AskUserQuestion.
//	        Codex: request_user_input (the TUI offers it in Plan mode only;
//	        in Default mode the tool call fails and the error is echoed).
//	        The questions are fixed: see Questions; options=3 or 4 adds
//	        MoreColors to the first.
//	steps   n=N (default 3), escalate=true|false (default false): a task of N
//	        shell calls in sequence (echo akk-step-1 ... akk-step-N; with
//	        escalate, "touch akk-step-i && echo akk-step-i", so that every
//	        step asks for approval in both agents), then a final answer
//	        listing what came back; with secs=S that answer streams as slow
//	        does over S seconds (so a Turn is seen working after its steps).
//	error   status=500|529|429|400 (default 500), times=N: an HTTP error
//	        with the body each API uses. The agents retry 5xx and 429 for a
//	        long while (Claude Code: "Retrying in 8s · attempt 5/10"; Codex:
//	        "Reconnecting... 3/5") before they show the error; a 400 shows at
//	        once. With times=N only the first N attempts at the same user
//	        text fail, then the answer is "Recovered after N failed attempts."
//	secret  a reply holding secret-looking (fake) strings: SecretAnthropicKey and
//	        SecretAWSKey.
//	mcp_drive project=P text=T prefix=X (default "mcp__akk__"): an
//	        assistant driving another pane through AKK's MCP tools: X+akk_list,
//	        X+akk_send of T to the pane of project P (its terminal send
//	        action), then X+akk_status until the Turn ends, then a final answer
//	        "MCP drive: turn <id> <state>: <<<final message>>>". follow=false
//	        ends after the send: "MCP drive: sent turn <id> (<state>)."
//	        With on_approval=approve, a later message of the same conversation
//	        (OpenAI requests) that has no marker and names
//	        "turn.approval_required" and a turn_ id (AKK's callback, as a
//	        host shows it) is answered with X+akk_status of that Turn, then
//	        X+akk_approve approve_once, then a final answer quoting it.
//
// After a tool result (a Claude tool_result or a Codex function_call_output
// that follows the user's message) the answer is a final message that quotes
// each result verbatim between "<<<" and ">>>", so a test can see what the
// agent received. The steps scenario issues its next call instead, until all
// N are done.
//
// # Side requests
//
// Both agents send requests that are not the user's turn: a request for a
// session title, and Claude's start-up probes. A request that offers no tools
// is answered with a short plain text ("Fake session title"); one that asks
// for structured output (Codex's title request, which may still offer
// apply_patch) with {"title":"Fake session title"}. Both are recorded with
// Aux set and never play a scenario. Newer Codex models receive their tools
// in an "additional_tools" input item, which counts as offering tools. Other
// paths the agents call at start-up (token counting, model lists, Claude Code
// 2.1.267's /api/hello) are answered harmlessly; a path the server does not
// know gets 404 and is logged and recorded, so it can be added.
//
// The user text is the latest user message with typed text (Claude Code's
// <system-reminder> blocks removed), not the latest message: Claude Code may
// end the list with a role "system" entry, and tool results come as user
// messages of their own.
//
// # Recording
//
// Every request is recorded (Requests, WaitRequest) with the scenario chosen,
// the user text, the tool results seen, the caller (Client: a digest of its
// API key, see ClientID; keys themselves are never kept), the tool the answer
// called, and the time its response finished streaming (Finished; Interrupted
// when the client hung up first), which tests use to measure detection
// latency. The same list is served as JSON at GET /_fake/requests.
// Options.DumpDir keeps each raw request body, to learn what a new agent
// version sends.
package fakemodel
