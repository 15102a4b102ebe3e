"""Tests of the translation scope: detection, language facts, number formats and glossary."""

from __future__ import annotations

import pytest
from langchain_core.messages import ToolMessage

from agents import translation
from agents.translation import (
    TranslationError,
    detect,
    glossary,
    languages,
    localize_number,
    lookup_term,
    resolve_language,
)
from tests.agents_support import assert_scope_exports, call_tool

NNBSP = "\u202f"  # narrow no-break space
NBSP = "\u00a0"  # no-break space


def _call(tool_name: str, args: dict[str, object]) -> ToolMessage:
    return call_tool(translation.TOOLS, tool_name, args)


def test_exports() -> None:
    assert_scope_exports(
        translation, ["detect_language", "language_info", "format_number", "glossary_lookup"]
    )


def test_tool_descriptions_say_the_model_translates() -> None:
    assert "does not translate" in translation.detect_language.description
    assert "you do the translating" in translation.language_info.description
    assert "translate them yourself" in translation.glossary_lookup.description


# --------------------------------------------------------------------------- detection


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("The weather is nice today and we are going to the beach.", "en"),
        ("Could you please send me the invoice by Friday?", "en"),
        ("Je voudrais réserver une table pour deux personnes ce soir.", "fr"),
        ("Il fait très beau aujourd'hui, nous allons à la plage.", "fr"),
        ("Ich habe heute keine Zeit, weil ich arbeiten muss.", "de"),
        ("Können Sie mir bitte die Rechnung schicken?", "de"),
        ("¿Dónde está la estación de tren más cercana?", "es"),
        ("El gato duerme en el sofá desde esta mañana.", "es"),
        ("Vorrei prenotare un tavolo per due persone stasera.", "it"),
        ("Oggi fa bel tempo e andiamo al mare.", "it"),
        ("Eu gostaria de reservar uma mesa para duas pessoas hoje à noite.", "pt"),
        ("Hoje o tempo está bom e vamos à praia.", "pt"),
        ("Ik wil graag een tafel reserveren voor twee personen vanavond.", "nl"),
        ("Kunt u mij de factuur voor vrijdag sturen?", "nl"),
        ("Jag skulle vilja boka ett bord för två personer i kväll.", "sv"),
        ("Dzisiaj jest ładna pogoda i idziemy na plażę.", "pl"),
        ("Chtěl bych si rezervovat stůl pro dvě osoby na dnešní večer.", "cs"),
        ("Bu akşam iki kişilik bir masa ayırtmak istiyorum.", "tr"),
        ("Tänään on kaunis sää ja menemme rannalle.", "fi"),
        ("Saya ingin memesan meja untuk dua orang malam ini.", "id"),
        ("Сегодня хорошая погода, и мы идём на пляж.", "ru"),
        ("Сьогодні гарна погода, і ми йдемо на пляж.", "uk"),
        ("الطقس جميل اليوم ونحن ذاهبون إلى الشاطئ.", "ar"),
        ("امروز هوا خوب است و ما به ساحل می‌رویم.", "fa"),
        ("Θα ήθελα να κλείσω ένα τραπέζι για δύο άτομα απόψε.", "el"),
        ("הייתי רוצה להזמין שולחן לשני אנשים הערב.", "he"),
        ("मैं आज शाम दो लोगों के लिए एक टेबल बुक करना चाहता हूँ।", "hi"),
        ("今晩二人用のテーブルを予約したいです。", "ja"),
        ("오늘 저녁 두 사람을 위한 테이블을 예약하고 싶습니다.", "ko"),
        ("ฉันต้องการจองโต๊ะสำหรับสองคนคืนนี้", "th"),
    ],
)
def test_detect_sentences(text: str, code: str) -> None:
    result = detect(text)
    assert result.language == code
    assert 0.6 <= result.confidence <= 0.99
    assert result.runner_up != code


def test_detect_han_only_is_chinese_with_japanese_runner_up() -> None:
    result = detect("我想今晚预订一张两人桌。")
    assert (result.language, result.runner_up, result.script) == ("zh", "ja", "Han")
    assert result.confidence < 0.9
    assert "Japanese" in result.note


def test_detect_separates_russian_from_ukrainian() -> None:
    assert detect("Я хотел бы забронировать столик на двоих на сегодняшний вечер.").language == "ru"
    assert detect("Я хотів би забронювати столик на двох на сьогоднішній вечір.").language == "uk"


def test_detect_separates_arabic_from_persian() -> None:
    assert detect("أود أن أحجز طاولة لشخصين هذا المساء.").language == "ar"
    assert detect("می‌خواهم برای امشب یک میز برای دو نفر رزرو کنم.").language == "fa"


@pytest.mark.parametrize(
    ("text", "note"),
    [
        ("", "no letters"),
        ("12345 !?", "no letters"),
        ("ok", "too short"),
        ("Hi!", "too short"),
        ("Hola", "not enough evidence"),
        ("Taxi", "not enough evidence"),
        ("Paris", "not enough evidence"),
        ("hello world", "not enough evidence"),
        ("字", "too short"),
        ("გამარჯობა", "the Georgian script is not covered"),
        ("ᚠᚢᚦᚨᚱᚲ", "this script is not covered"),
    ],
)
def test_detect_is_honest_about_short_or_unclear_text(text: str, note: str) -> None:
    result = detect(text)
    assert result.language == "unknown"
    assert result.confidence == 0.0
    assert note in result.note


def test_detect_language_tool_output() -> None:
    text = translation.detect_language.invoke(
        {"text": "Je voudrais réserver une table pour deux personnes ce soir."}
    )
    lines = text.splitlines()
    assert lines[0] == "language: fr (French)"
    assert lines[1].startswith("confidence: 0.")
    assert "script: Latin" in lines
    unknown = translation.detect_language.invoke({"text": "Hola"})
    assert unknown.splitlines()[0] == "language: unknown"
    assert "weak guess: es" in unknown


# --------------------------------------------------------------------------- language facts


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("fr", "fr"),
        ("FR", "fr"),
        ("French", "fr"),
        ("french", "fr"),
        ("français", "fr"),
        ("Francais", "fr"),
        ("Deutsch", "de"),
        ("pt-BR", "pt"),
        ("zh_Hans", "zh"),
        ("Farsi", "fa"),
        ("日本語", "ja"),
        ("  Spanish ", "es"),
    ],
)
def test_resolve_language(query: str, code: str) -> None:
    assert resolve_language(query).code == code


def test_resolve_language_suggests_close_matches() -> None:
    with pytest.raises(TranslationError, match=r"did you mean French \(fr\)\?"):
        resolve_language("Frnch")
    with pytest.raises(TranslationError, match="known languages: ar, cs, de"):
        resolve_language("Klingon")


def test_language_table_is_complete() -> None:
    table = languages()
    assert len(table) >= 20
    for code, language in table.items():
        assert language.code == code
        assert len(code) == 2
        assert language.direction in ("ltr", "rtl")
        assert language.grouping in ("standard", "indian")
        assert len(language.digits) == 10
        assert language.decimal != language.group
        assert language.quotes
        assert language.formality
    assert {code for code, lang in table.items() if lang.direction == "rtl"} == {"ar", "fa", "he"}


def test_language_info_tool() -> None:
    text = translation.language_info.invoke({"language": "French"})
    assert text.splitlines()[0] == "French (fr); native name: français"
    assert "direction: left-to-right" in text
    assert "thousands separator narrow no-break space U+202F" in text
    assert f"1{NNBSP}234{NNBSP}567,89" in text
    assert "«" in text
    assert "vous" in text
    arabic = translation.language_info.invoke({"language": "ar"})
    assert "direction: right-to-left" in arabic
    assert "digits: ٠١٢٣٤٥٦٧٨٩" in arabic
    spanish = translation.language_info.invoke({"language": "es"})
    assert "4-digit numbers are not grouped: 3901" in spanish
    hindi = translation.language_info.invoke({"language": "Hindi"})
    assert "12,34,567.89" in hindi
    assert "lakh" in hindi


def test_language_info_unknown_language_is_an_error_message() -> None:
    message = _call("language_info", {"language": "Frnch"})
    assert message.status == "error"
    assert "unknown language 'Frnch'; did you mean French (fr)?" in message.content


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("value", "language", "decimals", "expected"),
    [
        (3901, "fr", None, f"3{NNBSP}901"),
        (3901.0, "fr", None, f"3{NNBSP}901"),
        (3901.5, "fr", None, f"3{NNBSP}901,5"),
        (1234567.891, "fr", None, f"1{NNBSP}234{NNBSP}567,891"),
        (3901, "de", None, "3.901"),
        (3901.5, "de", 2, "3.901,50"),
        (3901, "en", None, "3,901"),
        (1234567.891, "en", 2, "1,234,567.89"),
        (999, "en", None, "999"),
        (1234567, "hi", None, "12,34,567"),
        (3901234, "hi", None, "39,01,234"),
        (123456789.5, "hi", None, "12,34,56,789.5"),
        (3901, "es", None, "3901"),
        (13901, "es", None, "13.901"),
        (3901, "pl", None, "3901"),
        (13901, "pl", None, f"13{NBSP}901"),
        (3901, "ru", None, f"3{NBSP}901"),
        (-12.5, "sv", None, "\u221212,5"),
        (3901, "it", None, "3.901"),
        (3901, "ja", None, "3,901"),
        (3901.5, "ar", None, "٣٬٩٠١٫٥"),
        (-5, "ar", None, "\u061c-٥"),
        (3901.5, "fa", None, "۳٬۹۰۱٫۵"),
        (2.675, "fr", 2, "2,68"),
        (2.5, "en", 0, "3"),
        (-0.001, "de", 2, "0,00"),
        (0.000001, "en", None, "0.000001"),
        (1e21, "en", None, "1,000,000,000,000,000,000,000"),
        (-1234.5, "en", None, "-1,234.5"),
    ],
)
def test_localize_number(value: float, language: str, decimals: int | None, expected: str) -> None:
    assert localize_number(value, language, decimals) == expected


@pytest.mark.parametrize(
    ("value", "language", "decimals", "message"),
    [
        (1.0, "xx", None, "unknown language 'xx'"),
        (float("nan"), "en", None, "finite"),
        (float("inf"), "en", None, "finite"),
        (1.0, "en", -1, "decimals must be between 0 and 20"),
        (1.0, "en", 21, "decimals must be between 0 and 20"),
    ],
)
def test_localize_number_rejects(
    value: float, language: str, decimals: int | None, message: str
) -> None:
    with pytest.raises(TranslationError, match=message):
        localize_number(value, language, decimals)


def test_format_number_tool() -> None:
    assert translation.format_number.invoke({"value": 3901, "language": "French"}) == (
        f"3{NNBSP}901"
    )
    assert translation.format_number.invoke(
        {"value": 3901.456, "language": "de", "decimals": 2}
    ) == ("3.901,46")
    error = _call("format_number", {"value": 1, "language": "Elvish"})
    assert error.status == "error"
    assert "unknown language 'Elvish'" in error.content


# --------------------------------------------------------------------------- glossary


@pytest.mark.parametrize(
    ("term", "language", "expected"),
    [
        ("sign in", "fr", "sign in -> French: Se connecter [note: button or menu label]"),
        ("Log In", "German", "sign in -> German: Anmelden [note: button or menu label]"),
        ("shopping carts", "ja", "shopping cart -> Japanese: カート"),
        ("Settings", "pt", "settings -> Portuguese (Brazil): Configurações [note: menu label]"),
        ('"refund"', "es", "refund -> Spanish: reembolso"),
        ("sign-out", "nl", "sign out -> Dutch: Uitloggen [note: button or menu label]"),
        (
            "checkout",
            "zh",
            "checkout -> Chinese (Simplified): 结账 [note: the step where the customer pays]",
        ),
    ],
)
def test_glossary_hits(term: str, language: str, expected: str) -> None:
    assert lookup_term(term, language) == expected


def test_glossary_miss_says_so() -> None:
    text = lookup_term("banana", "fr")
    assert text.startswith("'banana' is not in the glossary")
    assert "translate it yourself" in text
    assert "Similar glossary terms: password" in lookup_term("passwrd", "fr")


def test_glossary_term_without_that_language() -> None:
    text = lookup_term("password", "ko")
    assert "no approved Korean translation" in text
    assert "approved for: de, es, fr, it, ja, nl, pt, zh" in text


def test_glossary_protected_names() -> None:
    assert "keep it untranslated" in lookup_term("LangGraph", "fr")
    assert "keep it untranslated" in lookup_term("attention-scoping", "de")


def test_glossary_data_is_consistent() -> None:
    data = glossary()
    known = set(languages())
    for entry in data.index.values():
        assert set(entry.translations) <= known
        assert entry.do_not_translate or entry.translations
    assert set(data.variants) <= known


def test_glossary_lookup_tool_errors() -> None:
    error = _call("glossary_lookup", {"term": "sign in", "target_language": "Frnch"})
    assert error.status == "error"
    assert "did you mean French (fr)?" in error.content
    empty = _call("glossary_lookup", {"term": "  ", "target_language": "fr"})
    assert empty.status == "error"
    assert empty.content == "term is empty"
    hit = _call("glossary_lookup", {"term": "invoice", "target_language": "it"})
    assert hit.status == "success"
    assert hit.content == "invoice -> Italian: fattura"
