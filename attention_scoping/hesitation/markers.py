"""The hesitation radar's phrase markers: case-insensitive regular expressions per category.

English by default (`DEFAULT_MARKERS`); `HesitationMarkers.extend` adds patterns for other
languages. Message categories are looked for in the model's message; the request categories
(`tool_question`, `forbids_running`, `review_first`, `text_request`, `acts_themselves`,
`action_command`, `action_request`, `list_question`, `needed_words`) in the user's request.
Framework-free.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cached_property

from attention_scoping.hesitation.errors import KitConfigError, KitTypeError

__all__ = [
    "ASKS_ABOUT_TOOLS",
    "DEFAULT_MARKERS",
    "REQUEST_CATEGORIES",
    "HesitationMarkers",
    "category_enabled",
]

_DONE_VERBS = (
    r"scheduled|created|sent|added|saved|updated|deleted|removed|booked|cancell?ed|posted|"
    r"published|deployed|merged|opened|closed|filed|submitted|transferred|refunded|paid|"
    r"uploaded|renamed|moved|archived|assigned|invited|registered|enabled|disabled|set up|"
    r"configured|completed|finished|queued|applied|reverted|rolled back|restarted|started|"
    r"stopped|triggered|launched|generated|exported|imported|converted|calculated|computed|"
    r"executed|ran|issued|charged|reset|logged|recorded|tagged|notified|emailed|forwarded|"
    r"replied|translated|reserved|approved|granted|revoked|blocked|unblocked|installed|"
    r"restored|shared|backed up|renewed|scaled|rebooted|paused|resumed|flagged|labell?ed|"
    r"muted|unsubscribed|subscribed|synced|rescheduled|declined|accepted|ordered|placed|"
    r"drafted and sent|fixed|created and|looked up|checked and"
)


@dataclass(frozen=True)
class HesitationMarkers:
    """Phrase markers of the radar, as case-insensitive regular expressions per category.

    Plain phrases work as they are (escape `?`, `.`, `(` if you mean them literally). Extend
    the English defaults for other languages:

    Example:
        ```python
        from attention_scoping.hesitation.radar import detect_hesitation
        from attention_scoping.hesitation.radar import DEFAULT_MARKERS

        fr = DEFAULT_MARKERS.extend(
            confirmation=[r"voulez-vous que je", r"dois-je continuer"],
            request=[r"veuillez (fournir|préciser|indiquer)"],
        )
        detect_hesitation(text, schemas, markers=fr)
        ```
    """

    confirmation: tuple[str, ...] = ()
    """Asking the user for permission or confirmation to act."""
    request: tuple[str, ...] = ()
    """Asking the user for input values."""
    promise: tuple[str, ...] = ()
    """Announcing an action without taking it ("I'll schedule it now")."""
    completion: tuple[str, ...] = ()
    """Reporting an outcome: something was done, or here are the results."""
    error: tuple[str, ...] = ()
    """Reporting a failure."""
    explanation: tuple[str, ...] = ()
    """Saying why a value is missing or ambiguous (makes a question a real clarification)."""
    requirement: tuple[str, ...] = ()
    """Saying that the schema requires a value without a default ("both are required")."""
    pleasantry: tuple[str, ...] = ()
    """Courtesy phrases removed before matching ("let me know if you need anything else")."""
    schema_words: tuple[str, ...] = ()
    """Words about schemas and forms ("parameters", "the following details")."""
    tool_question: tuple[str, ...] = ()
    """In the user's request: asking about a tool rather than for an action."""
    review_first: tuple[str, ...] = ()
    """In the user's request: asking to see a draft or plan before anything runs."""
    forbids_running: tuple[str, ...] = ()
    """In the user's request: forbidding to run anything ("don't send it")."""
    text_request: tuple[str, ...] = ()
    """In the user's request: asking for text, not an action: wording, a draft, a translation,
    an explanation, docs, a comparison, a summary, a template."""
    acts_themselves: tuple[str, ...] = ()
    """In the user's request: the user will carry the action out ("I'll send it myself")."""
    action_command: tuple[str, ...] = ()
    """In the user's request: it opens with an action verb ("Email Bob…", "Remind me…")."""
    action_request: tuple[str, ...] = ()
    """In the user's request: asking the assistant to carry the action out ("and send it")."""
    list_question: tuple[str, ...] = ()
    """In the user's request: a question or an ask to list, describe or outline something. With
    `needed_words` in the same sentence, the user asks what a tool needs (the answer is a list
    of fields)."""
    needed_words: tuple[str, ...] = ()
    """In the user's request: words about what something needs, takes or is made of (required,
    optional, fields, inputs, details, "goes into", "made of")."""

    def extend(self, **extra: Iterable[str]) -> HesitationMarkers:
        """A copy with `extra` patterns appended to the named categories."""
        changes: dict[str, tuple[str, ...]] = {}
        for category, patterns in extra.items():
            if category not in self.__dataclass_fields__:
                valid = ", ".join(self.__dataclass_fields__)
                msg = f"unknown marker category {category!r}; valid: {valid}"
                raise KitConfigError(msg)
            if isinstance(patterns, str):
                msg = f"{category}: pass a list of patterns, not the string {patterns!r}"
                raise KitTypeError(msg)
            changes[category] = (*getattr(self, category), *patterns)
        return replace(self, **changes)

    @cached_property
    def compiled(self) -> dict[str, re.Pattern[str] | None]:
        """One compiled alternation per category (None when a category is empty)."""
        out: dict[str, re.Pattern[str] | None] = {}
        for category in self.__dataclass_fields__:
            patterns = getattr(self, category)
            for p in patterns:
                re.compile(p)  # fail with the offending pattern, not the alternation
            out[category] = (
                re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)
                if patterns
                else None
            )
        return out


DEFAULT_MARKERS = HesitationMarkers(
    confirmation=(
        r"\bwould you like (?:me )?to\b",
        r"\bdo you want (?:me )?to\b",
        r"\b(?:is|does) (?:that|this|it|everything) (?:ok|okay|alright|all right|fine|correct|"
        r"right|look (?:good|right|ok|okay|correct)|sound (?:good|right|ok|okay)|work for you)\b",
        r"\b(?:please|kindly|just|can you|could you|would you) (?:double[- ]check and )?"
        r"confirm\b",
        r"\bconfirm (?:if|whether|that you|you(?:'d| would))\b",
        r"\b(?:just )?to confirm\b",
        r"\b(?:once|if|after|when) you(?:'ve)? (?:confirm|approve|give me the go-ahead|say)\b",
        r"\b(?:your|an explicit) (?:confirmation|approval|permission|go-ahead|consent|ok)\b",
        r"\b(?:proceed|continue|go ahead)\s*\?",
        r"\bready (?:for me )?to (?:proceed|go|submit|send|schedule|create|run|book)\b",
        r"\bif you(?:'d| would)? (?:like|want)(?: me)? to (?:proceed|continue|go ahead)\b",
        r"\blet me know (?:if|whether|when) (?:you(?:'d| would)? (?:like|want) me to|"
        r"i should|(?:that|this)(?:'s| is) (?:ok|okay|fine|correct)|you(?:'re| are) ready|"
        r"to (?:proceed|go ahead))",
        r"\bbefore (?:i|we) (?!can\b|forget\b)[a-z]{2,}\b",
        r"\b(?:yes|no)\s*/\s*(?:no|yes)\b|\(y/n\)",
        r"\bgo ahead (?:and )?(?:\w+ )?\?|\bgo ahead with (?:it|this|that)\s*\?",
        r"\bsay (?:yes|the word|go)\b",
        r"\b(?:ok|okay|alright|fine) (?:for me )?to (?:submit|send|proceed|go ahead|create|post|"
        r"run|book|schedule|place|deploy|apply|delete)\b",
        r"\bwant me to\b",
        r"\b(?:approve|confirm)\s*\?",
        r"\b(?:correct|right|ok|okay|sounds? good|looks? good|good to go|agreed|all good|"
        r"yes or no)\s*\?",
        r"\b(?:just )?to (?:double[- ]check|be (?:sure|safe)|make sure)\b",
        r"\bare you sure\b",
        r"\bgo-ahead\b|\bgreen light\b|\bsign[- ]off\b",
        r"\b(?:is|was) (?:that|this) what you (?:want|wanted|meant|mean|had in mind)\b",
        r"\b(?:does|would) (?:that|this) work\b",
    ),
    request=(
        r"\bplease (?:provide|specify|share|supply|send|give|tell|enter|fill|list|clarify|"
        r"let me know|add|include|choose|pick|select|indicate)\b",
        r"\b(?:could|can|would|will) you (?:please |kindly )?(?:provide|specify|share|supply|"
        r"give|tell|send|fill|clarify|let me know|choose|pick|select|indicate|list)\b",
        r"\b(?:you(?:'ll| will)? (?:need|have) to|you must|you should|you(?:'d| would) need to)"
        r" (?:provide|specify|give|supply|fill|enter|tell|choose|pick|select|include)\b",
        r"\b(?:i|we)(?:'ll| will| would|'d)? (?:need|require|still need|just need)"
        r" (?:the|a|an|some|few|a few|more|these|those|following|your|you to|additional|"
        r"to know|at least|all|several|each|both|values?|details?|information|info)\b",
        r"\b(?:the )?following (?:details|information|info|parameters|fields|values|inputs|"
        r"arguments|settings|options|items|things|pieces)\b",
        r"\b(?:required|missing|necessary|needed|remaining|mandatory) (?:parameters|fields|"
        r"arguments|details|information|info|inputs|values|settings)\b",
        r"\bwhat (?:values?|details|settings|options|parameters) (?:would|should|do|shall|"
        r"to)\b",
        r"\bwhat would you like (?:the|it|me|to|for)\b",
        r"\blet me know (?:the|which|what|your|how|when|where|who)\b",
        r"\b(?:unable|not able|can't|cannot|can not) (?:to )?(?:proceed|continue|go ahead|"
        r"complete this|do this)\b(?: \w+)? (?:without|until|unless)\b",
        r"\b(?:once|as soon as|when|after) you (?:provide|give|share|send|let me know|tell me|"
        r"fill|specify|supply)\b",
        r"\bif you (?:can |could )?(?:provide|give me|share|send me|tell me|specify|supply)\b",
        r"\bfill (?:in|out) (?:the|these|this|those|a|your)\b",
        r"\bprovide (?:me with|the necessary|the required|values|these|those|all)\b",
        r"\b(?:any|some) (?:preferences?|specific (?:values|details|settings))\b",
        r"\bhow would you like\b",
        r"\bbefore (?:i |we )?(?:can )?[a-z]{3,}ing (?:the|this|it|that|your|a|an|anything)\b",
        r"\b(?:just |simply )?(?:tell|give|send) me (?!a moment|a sec)\b",
        r"\bwhich (?:values?|settings|options|details) (?:would|should|do)\b",
    ),
    promise=(
        r"\b(?:i(?:'ll| will| am going to|'m going to| am about to|'m about to)|let me)"
        r" (?:now |go ahead and |just |quickly |then |also |first |right away )*"
        r"(?!know\b|need\b|be\b|have\b|wait\b|let you\b|remember\b|explain\b|summari[sz]e\b|"
        r"clarify\b|keep\b|note\b|make sure\b|try to\b|only\b|not\b|never\b)[a-z]{3,}\b",
        r"\b(?:proceeding|going ahead) (?:to|with|now)\b",
        r"(?:^|[.!?]\s+|\n\s*)[a-z]+ing\b(?:[^.!?\n]|\.(?=\S))*\b(?:now|right away|"
        r"immediately)\b",
        r"\bnow (?:scheduling|creating|sending|booking|executing|running|calling|submitting|"
        r"posting|deploying|adding|setting up)\b",
        r"\b(?:i(?:'m| am)) (?:now )?(?:scheduling|creating|sending|booking|executing|running|"
        r"calling|submitting|posting|deploying|adding|setting up)\b",
    ),
    completion=(
        rf"\b(?:i|we)(?:'ve| have| had)? (?:successfully |just |now |already |also )?"
        rf"(?:{_DONE_VERBS})\b",
        r"\b(?:has|have|had) (?:now |also |just )?been (?:successfully |now )?(?:\w+ed|sent|"
        r"set|done|run|made|built|taken|written|paid|put|shut|held|given|kept|bound|split|"
        r"set up|torn down|spun up)\b",
        rf"\b(?:is|are|was|were) (?:now |successfully |all |already )?(?:{_DONE_VERBS}|set|"
        r"done|complete|live|confirmed|in place|on its way|under way|underway|up and running)"
        r"\b",
        r"\bsuccessfully\b",
        # "Reminder scheduled for 09:00", "Created the event:" (no subject, no question).
        rf"(?:^|[.!?]\s+|\n\s*)(?:(?!(?:i|we|you|should|will|would|can|could|must|to|be|"
        rf"needs?|what|which|when|who|how|shall)\b)[\w#\"'“”-]+ ){{0,3}}(?:{_DONE_VERBS})\b"
        # ...up to the end of its own sentence without a question mark.
        rf"(?=(?:[^?.!\n]|\.(?=\S))*(?:[.!]|\n|$))",
        r"^\s*(?:done|all set|all done|finished|complete|completed|success)\b",
        # A status line: "Deployment complete", "Dry run passed", "Backup succeeded".
        r"(?:^|[.!?]\s+|\n\s*)(?:(?!(?:please|to|will|can|should|must|would|could|is|are|"
        r"does|do)\b)[\w#\"'“”/.-]+ ){1,3}(?:complete|completed|passed|succeeded|finished|"
        r"successful)\b(?=[^?\n]*(?:\n|$))",
        r"\b(?:you(?:'re| are) )?all set\b",
        r"\bhere(?:'s| is| are) (?:your|the results?|the answer|what i found|a summary|the "
        r"(?:current|latest|forecast|list|summary|breakdown|report|total|balance|status))\b",
        r"\bi found\b(?! (?:the|a|an) (?:\w+ )?(?:tool|schema|function|endpoint|api))",
        r"(?<!\bif )(?<!\bwhether )\b(?:found|returned|matched|there (?:is|are|were|was)) "
        r"(?:\d+|no|only|one|two|three|several|exactly)\b",
        r"\b(?:the )?(?:result|answer|total|sum|balance|forecast|temperature|average|median|"
        r"status|current (?:\w+ )?(?:price|rate|value))s? (?:is|are|was|were|comes? to|shows?)"
        r"\b",
        r"\b(?:job|booking|reservation|confirmation|reference|tracking|order|transaction|"
        r"receipt|run|build) (?:id|number|#|no\.?|reference)[:\s#]*[a-z0-9][\w-]*\d",
        r"\bwill (?:fire|run|go out|be sent|notify you|remind you|trigger|start|arrive|expire)\b",
        r"\bit(?:'s| is) (?:currently|now) \w+",
        r"\b(?:it(?:'s| is)|that(?:'s| is)) done\b",
    ),
    error=(
        r"\b(?:failed|errored|rejected|denied|forbidden|unauthori[sz]ed|timed out|"
        r"unavailable|unreachable|not found|doesn't exist|does not exist|no such|"
        r"rate[- ]limited|traceback|outage|could not be|couldn't be)\b",
        r"\ban? (?:\w+ )?error\b|\berror(?:s)? (?:says|said|message|code|was|is|:)",
        r"\b(?:couldn't|could not|wasn't able to|was unable to|were unable to|weren't able to|"
        r"didn't|did not|won't|will not) (?:\w+ ){0,2}(?:complete|create|schedule|send|find|"
        r"reach|connect|run|execute|process|save|update|delete|book|load|fetch|retrieve|access|"
        r"go through|work|succeed|accept|authenticate|validate|parse)\b",
        r"\b(?:returned|responded with|came back with|gave|threw|raised) (?:an? |the )?"
        r"(?:\w+ )?(?:error|status|code|exception)\b",
        r"\b(?:http|status|code)\s*(?:code\s*)?[45]\d\d\b",
        r"\bwent wrong\b|\bis down\b|\bis not responding\b|\bis invalid\b|\bnot (?:a )?valid\b",
        r"\bnothing (?:was|has been|got|is) (?:\w+ed|sent|run|done|made|spent|set|written|"
        r"taken)\b(?! yet\b)",
    ),
    explanation=(
        r"\b(?:couldn't|could not|can't|cannot|didn't|did not|don't|do not) (?:find|see|locate|"
        r"determine|tell|know|infer|work out|identify|match)\b",
        r"\bthere (?:are|were) (?:two|three|four|several|multiple|many|\d+)\b",
        r"\b(?:not sure|unsure|unclear|uncertain|ambiguous)\b",
        r"\b(?:you )?(?:didn't|did not|haven't|have not) (?:say|mention|specify|tell|give|"
        r"provide|include|indicate)\b",
        r"\b(?:no|none|nothing) (?:\w+ ){0,2}(?:on file|found|matching|matches|saved|"
        r"configured|listed|stored|linked|recorded|provided|specified|given|available|set)\b",
        r"\bmatch(?:es|ing)? (?:both|two|several|multiple|more than one)\b",
        r"\bwhich one\b|\bdo you mean\b|\bdid you mean\b|\bmore than one\b",
        r"\b(?:isn't|is not|wasn't|was not|aren't|are not) (?:in|on|part of|mentioned|"
        r"specified|given|included|clear)\b",
        r"\bi (?:only )?(?:have|see|know) (?:no|two|several|both)\b",
        r"\b(?:depends on|only you (?:can|know))\b",
        r"\b(?:i|we) (?:don't|do not|didn't|did not) (?:have|know)\b",
        r"\b(?:don't|do not|rather not|won't|will not|shouldn't) (?:want to )?guess\b",
        r"\b(?:has|have|had|gives?|gave|says?|said|mentions?) (?:neither|none|nothing|no)\b",
        r"\b(?:doesn't|does not|didn't|did not) (?:say|mention|specify|include|give|have)\b",
        r"\bboth (?!(?:are|is) (?:required|needed|mandatory))(?:\w+ ){0,2}(?:are|have|exist|"
        r"look|match|work)\b",
    ),
    requirement=(
        r"\b(?:no|without an?|neither has an?|none has an?|has no|have no) default\b",
        r"\b(?:is|are) (?:both |all |also )?(?:required|mandatory)\b",
        r"\b(?:the|this|that|your|each|every) (?:\w+ ){1,2}(?:needs|requires)\b",
    ),
    pleasantry=(
        r"\blet me know if (?:you )?(?:need|want|have|would like|'d like)(?: me to)? "
        r"(?:anything|any|more|other|further|something|another|help|changes|to change|to "
        r"adjust|to make)\b[^.!?\n]*[.!?]?",
        r"\b(?:is there )?anything else[^.!?\n]*[.!?]?",
        r"\b(?:happy|glad) to help\b[^.!?\n]*[.!?]?",
        r"\bhope (?:this|that) helps\b[^.!?\n]*[.!?]?",
        r"\bfeel free to\b[^.!?\n]*[.!?]?",
        r"\bwould you like (?:me to )?(?:do )?anything else\b[^.!?\n]*[.!?]?",
        # A follow-up offer for something more is not a request to confirm the task at hand.
        r"(?:^|(?<=[.!?])\s+|(?<=\n))(?:would you like|do you want|want|shall i|should i|can i)"
        r"(?: me)?(?: to)? [^.!?\n,;]*\b(?:also|as well|too|another|additional|more|other|"
        r"further|the rest)\b[^.!?\n,;]*\?",
        # Overriding a stated default is an offer, not a question.
        r"\bunless you (?:tell me|say|want|would like|'d like|prefer|'d prefer|would prefer|"
        r"specify|ask)\b[^.!?\n]*",
    ),
    schema_words=(
        r"\b(?:parameters?|fields?|arguments?|args|inputs?|details|information|info|settings|"
        r"options|values|schema|properties|form)\b",
        r"\b(?:required|optional|mandatory)\b",
        r"\b(?:a (?:bit|little) )?more (?:about|details|information|info|context)\b",
    ),
    tool_question=(
        r"\b(?:what|which) (?:parameters|fields|arguments|inputs|options|settings|values) "
        r"(?:does|do|will|would|can|should) (?:it|they|the|this|that|you|i|\w+_\w+)\b",
        r"\b(?:what|which) (?:parameters|fields|arguments|inputs) (?:are|is|exist)\b",
        r"\bhow (?:do|can|should|would) (?:i|you|we) (?:use|call)\b",
        r"\b(?:what(?:'s| is)|show me|explain|describe) (?:the |its |this |that )?(?:\w+ ){0,2}"
        r"schema\b",
        r"\bwhat (?:does|do|would) (?:\S+ ){1,4}(?:need|take|require|accept|expect)\b",
        r"\b(?:what|which) (?:info|information|details) (?:does|do|would)\b",
        r"\b(?:an? |the )?(?:example|sample|template) (?:payload|request|call|json|input|"
        r"arguments|body)\b",
        r"\bwhat (?:is|are) (?:required|needed|optional|the defaults?)\b",
        r"\b(?:explain|describe|walk me through|list|tell me about) (?:the |its |all |each )?"
        r"(?:\w+ ){0,3}(?:parameters|fields|arguments|options|inputs|settings|schema|payload|"
        r"format)\b",
        r"\bwhat (?:can|could|should|do) (?:i|we) (?:pass|send|give|provide|set|include|put)\b",
        r"\bwhat(?:'s| is) the (?:format|payload|json|syntax|input)\b",
        r"\b(?:show|give) me an? (?:example|sample|template)\b",
        r"\bwhat does (?:\S+ ){1,3}do\b|\bhow does (?:\S+ ){1,3}work\b",
        r"\b(?:what|which) (?:parameters|fields|arguments|options|inputs|settings)\b",
        r"\bschema\b",
        r"\bwhat does \S+ (?:need|take|require|accept|expect)\b",
    ),
    forbids_running=(r"\b(?:don't|do not|without) (?:run|execut|call|send|creat|schedul)\w*\b",),
    text_request=(
        # Wording, drafts and text the user will use.
        r"\bdraft(?:ing)? (?:a|an|the|me|my|our|some|up|it|them|this|that)\b|\b(?:a|the|my) "
        r"draft (?:of|for)\b|\bjust a draft\b|\bcompose\b|\bwording\b|\bphras(?:e|ing)\b|"
        r"\b(?:re-?word|rephrase|proofread)\b",
        r"\bwrite (?:me |up |out )|\bhelp me (?:write|word|phrase|draft|put)\b",
        r"\bwrite (?:\w+ ){0,3}(?:help text|tooltips?|docs|documentation|readme|faq|guide|section|"
        r"template|copy|blurb|intro(?:duction)?|announcement|reply)\b",
        r"\bwhat (?:should|could|would|do|can) i (?:write|say|put|use as)\b",
        r"\bhow (?:should|would|could|do|can) i (?:word|phrase|say|put|write)\b",
        r"\b(?:suggest|propose|come up with) (?:a|an|the|some|me)\b",
        r"\bgive me (?:a|an|the|some) (?:\w+ ){0,2}(?:wording|version|one-liner|phrasing|text|"
        r"title|subject|example|template|checklist|summary|outline)\b",
        # Translations and labels.
        r"\btranslat\w*|\blocali[sz]\w*",
        r"\b(?:called|labell?ed|read|say|be) in (?:english|german|french|spanish|italian|dutch|"
        r"portuguese|japanese|chinese|korean|russian|polish|swedish|danish|norwegian|finnish|"
        r"arabic|hindi|turkish|greek|czech|hungarian)\b",
        # Explanations and comparisons.
        r"\bexplain\b|\bdescribe\b|\bwalk me through\b",
        r"\bhow (?:does|do|would|will) (?:\S+ ){0,4}work\b",
        r"\bwhat happens (?:when|if|after|to)\b",
        r"\bdifference between\b|\bwhat(?:'s| is) the difference\b|\bcompar(?:e|ison)\b|"
        r"\b(?:versus|vs\.?)\s",
        r"\bwhen (?:should|do|would) (?:i|we|you) (?:use|pick|choose|prefer)\b|"
        r"\bshould i use\b|\bwhich (?:one )?(?:would|should) (?:you|i) (?:pick|choose|use)\b",
        # Docs, templates, checklists, summaries.
        r"\b(?:document(?:ation)?|docs|readme|faq|wiki|help text|tooltips?|onboarding|"
        r"contributor guide|user guide)\b",
        r"\btemplate\b|\bchecklist\b|\bsummari[sz]e\b|\brecap\b|\bsanity[- ]check\b|"
        r"\bbrief (?:me|my|the)\b|\bfor my notes\b",
    ),
    acts_themselves=(
        r"\bmyself\b|\bby hand\b|\bmanually\b",
        r"\bi(?:'ll| will|'m going to| am going to|'m about to| am about to) (?:\w+ ){0,2}"
        r"(?:send|post|file|submit|paste|call|create|add|book|set|do|deploy|put|enter|type)\b",
        r"\bbefore i (?:\w+ )?(?:create|send|post|file|submit|book|add|deploy|set|do|make|"
        r"enter)\b",
        r"\bwhat (?:do|should|would) i (?:need|have ready|prepare|double-check|check|fill in|"
        r"set)\b",
        r"\bwhat do (?:they|admins|users|people) (?:fill in|enter|need)\b",
    ),
    action_command=(
        r"^\W*(?:(?:please|ok|okay|now|so|then),?\s+)?(?:send|email|e-mail|post|schedule|book|file|"
        r"deploy|transfer|pay|invoice|remind(?! me (?:what|which|how|whether)\b)|message|notify|"
        r"submit|publish|forward)\b",
    ),
    list_question=(
        r"\b(?:what|which|how)\b",
        r"\b(?:list|enumerate|outline|itemi[sz]e|break (?:\w+ )?down|spell (?:\w+ )?out|"
        r"run (?:me )?through|walk (?:me )?through|tell me|show me|give me|remind me|explain|"
        r"describe|summari[sz]e|overview|rundown|run-down|recap)\b",
    ),
    needed_words=(
        r"\b(?:needs?|needed|requires?|required|requirements?|mandatory|optional|necessary|"
        r"prerequisites?|must|have to|has to|got to)\b",
        r"\b(?:fields?|parameters?|params|arguments?|args|inputs?|options|settings|details|"
        r"info(?:rmation)?|values|properties|attributes|bits|pieces|parts|components|"
        r"ingredients|data points?)\b",
        r"\b(?:made (?:up )?of|go(?:es)? into|consists?|composed|structured|structure|"
        r"takes?|accepts?|expects?|fill (?:in|out)|provide|collect|gather|prepare|supply)\b",
    ),
    action_request=(
        r"\b(?:and|then|&) (?:also )?(?:send|post|file|submit|schedule|create|book|publish|"
        r"deploy|open|add|email|forward|put|set)\b",
        r"\bgo ahead\b|\bright away\b|\b(?:send|post|publish|submit) (?:it|them|this|that) "
        r"(?:now|for me|to)\b",
    ),
    review_first=(
        r"\b(?:don't|do not|without|never) (?:actually |yet )?(?:run|execut|send|post|submit|"
        r"appl|deploy|creat|schedul|book|delet|call|plac|push|merg)\w* (?:it|them|this|that|"
        r"anything|yet|until|before|the (?:query|email|message|deploy|change|order|command))\b",
        r"\b(?:don't|do not) (?:\w+ )?(?:it |them |anything )?yet\b",
        r"\b(?:show|send|give) (?:it |them |this |that )?(?:to )?(?:me )?(?:first|before)\b",
        r"\blet me (?:see|review|check|look at|approve)\b",
        r"\bcheck with me\b|\b(?:for|so) (?:my|me to) (?:review|approval|check)\b",
        r"\b(?:wait|hold) (?:for|until) my\b",
        r"\bbefore (?:you )?(?:actually |really )?(?:run|send|post|submit|apply|deploy|"
        r"execut|creat|book|place|push|merg)\w*",
        r"\b(?:draft|preview|plan) (?:only|first)\b|\bjust (?:a )?(?:draft|plan|preview)\b",
        r"\b(?:review|approve) (?:it |them |this )?(?:first|before)\b",
        r"\bbefore (?:it|they|this|that|anything) (?:runs?|goes? out|is sent|gets? sent|is "
        r"applied|happens|ships|executes?|is posted|gets? posted)\b",
        r"\b(?:run|pass) (?:it|them|this|that) by me\b|\bhold off\b",
        r"\buntil i (?:say|confirm|approve|give|ok|okay|check|review|read|look|sign)\b",
        r"\bjust (?:show|draft|write|prepare|preview)\b|\bdry[- ]run\b",
    ),
)
"""The radar's English markers."""


def category_enabled(markers: HesitationMarkers, category: str) -> bool:
    """Whether `markers` has any pattern in `category` (an empty category switches it off)."""
    return bool(getattr(markers, category))


REQUEST_CATEGORIES = frozenset(
    {
        "tool_question",
        "review_first",
        "forbids_running",
        "text_request",
        "acts_themselves",
        "action_command",
        "action_request",
        "list_question",
        "needed_words",
    }
)
"""Categories looked for in the user's request, not in the model's message."""


def _user_asks(markers: HesitationMarkers) -> re.Pattern[str]:
    patterns = (*markers.tool_question, *markers.forbids_running)
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


ASKS_ABOUT_TOOLS = _user_asks(DEFAULT_MARKERS)
"""A user message matching this asks *about* a tool or forbids running one: the
`tool_question` and `forbids_running` markers of `DEFAULT_MARKERS` in one pattern."""
