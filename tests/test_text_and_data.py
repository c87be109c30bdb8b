import re
import sys
import unicodedata

import pytest

from conftest import BAD_TRAINING_FILES, random_texts_of_line_break_pieces
from fasttext_lib.data import LabeledTexts, iter_examples, read_labeled
from fasttext_lib.errors import FastTextError
from fasttext_lib.synthetic import generate_reviews
from fasttext_lib.text import NFC_TOKENS, QUOTES_AND_BREAKS, TRAINING_FORM, UNICODE_FORMS, nfc, normalize_text, tokenize
from fasttext_lib.writers import csv_line, write_csv, write_fasttext


@pytest.mark.parametrize("raw, expected", [
    ("The Food was GREAT!", "the food was great !"),
    ('He said "wow", then left.', "he said wow , then left ."),
    ("don't (ever) go?", "don ' t ( ever ) go ?"),
    ("a;b:c", "a b c"),
    ("line one.<br />line two", "line one . line two"),
    ("  many    spaces\tand\ttabs  ", "many spaces and tabs"),
])
def test_normalize_text_follows_fasttext_rules(raw, expected):
    assert normalize_text(raw) == expected


@pytest.mark.parametrize("composed, decomposed", [
    ("Café crème brûlée", "Cafe\u0301 cre\u0300me bru\u0302le\u0301e"),  # e + U+0301 is U+00E9
    ("Ñandú Ångström", "N\u0303andu\u0301 A\u030angstro\u0308m"),
    ("Ελλάδα", "Ελλα\u0301δα"),
    ("한국어", "\u1112\u1161\u11ab\u1100\u116e\u11a8\u110b\u1165"),  # Hangul jamo compose into syllables
])
def test_a_word_is_one_token_however_its_accents_are_encoded(composed, decomposed):
    # NFD text (a combining accent after its letter, as macOS and some editors write it) gave tokens of their own,
    # unknown to a model trained on the same words precomposed
    assert decomposed != composed and unicodedata.normalize("NFC", decomposed) == composed
    assert normalize_text(decomposed) == normalize_text(composed) == unicodedata.normalize("NFC", composed.lower())
    assert tokenize(decomposed) == tokenize(composed)


def test_ascii_and_nfc_text_normalizes_as_before_nfc():
    # (the rules without the NFC step: what notebooks' outputs and benchmarks were computed with)
    def before(text):
        text = re.sub(r'"', "", text.lower())
        return " ".join(re.sub(r"([.,()!?'])", r" \1 ", re.sub(r"<br />|[;:]", " ", text)).split())

    texts = generate_reviews(50, seed=1).texts + ["İstanbul ΟΔΟΣ ß ﬁ Ω Å café 👍🏽", "plain ascii, here!"]
    assert all(nfc(t) is t for t in texts)  # NFC already: the same string, not a copy
    assert [normalize_text(t) for t in texts] == [before(t) for t in texts]


@pytest.mark.parametrize("typographic, ascii", [
    ("I don’t like it", "I don't like it"),  # U+2019: what phones' "smart punctuation" types for '
    ("‘Great’ food, “great” service", "'Great' food, \"great\" service"),
    ("„Sehr gut“ und ‚gut‘", "\"Sehr gut\" und 'gut'"),  # German quotes
    ("«Très bien» ‛ok‟", "\"Très bien\" 'ok\""),  # French guillemets, reversed quotes
    ("donʼt don´t", "don't don't"),  # modifier letter apostrophe; the acute accent European keyboards type for '
])
def test_typographic_apostrophes_and_quotes_are_the_ascii_ones(typographic, ascii):
    """The same word was a different feature depending on the keyboard: don’t one token, don't three (don ' t);
    “great” the token “great”, "great" the token great. Typographic apostrophes are read as ', quotes as \" (dropped)."""
    assert tokenize(typographic) == tokenize(ascii)
    assert normalize_text(typographic) == normalize_text(ascii)


def test_primes_and_other_quotes_are_not_read_as_ascii_ones():
    # (feet and inches, minutes; fullwidth and CJK quotes: nobody types them for ' or ")
    assert tokenize("5′11″ ＂x＂ ＇y＇ 「z」") == ["5′11″", "＂x＂", "＇y＇", "「z」"]


@pytest.mark.parametrize("line_break", ["<br />", "<br/>", "<br>", "<BR>", "<Br/>", '<b"r>', '<br"/>'])
def test_every_html_line_break_spelling_is_a_space(line_break):
    # scraped reviews (IMDB, Amazon) spell it several ways; only <br /> was a space: great<br>the was one word
    assert tokenize(f"great{line_break}the food") == ["great", "the", "food"]


def test_a_bundle_of_an_older_form_reads_its_quotes_and_line_breaks_as_it_was_trained():
    # "NFC-tokens" bundles (text.NFC_TOKENS) were trained with don’t, “great” and great<br>the as words
    text = "I don’t say “great”<br>often. Or great<br/>x <br /> y"
    assert tokenize(text, "NFC-tokens") == ["i", "don’t", "say", "“great”<br>often", ".", "or", "great<br/>x", "y"]
    assert tokenize(text) == ["i", "don", "'", "t", "say", "great", "often", ".", "or", "great", "x", "y"]


@pytest.mark.parametrize("text, tokens", [
    ("wor“\u0301d x”\u0307 «e»\u0301", ["woŕd", "ẋ", "é"]),  # a dropped quote between a letter and its accent
    ("’\u0301 don’\u0301t <br<br>>z<br/<br>>", ["'", "\u0301", "don", "'", "\u0301t", "<br", ">z<br/", ">"]),
])
def test_tokens_of_typographic_quotes_are_nfc_and_normalized_again_the_same(text, tokens):
    assert tokenize(text) == tokens
    assert all(unicodedata.is_normalized("NFC", token) for token in tokens)
    once = normalize_text(text)
    assert normalize_text(once) == once and tokenize(once) == tokens


def test_normalize_text_is_idempotent():
    for text in generate_reviews(50, seed=1).texts:
        once = normalize_text(text)
        assert normalize_text(once) == once


@pytest.mark.parametrize("text, normalized", [
    ("<br\t/>x", "x"), ("<br  />", ""), ("<br;/>", ""), ("<br:\t/>a", "a"), ("a<br<br>/>b", "a b"),
    ("<br<br />/>/>/;;/>", "/>/ />"), ("great<br\n/>food", "great food"), ("x<br <br />/>/>y", "x />y"),
    ("a<br b<br />/>c", "a<br b />c"), ("/><br\t/>/>", "/> />"), ("<br <br ;/> />", ""), ("x<br<br<br\t/>/>/>y", "x y"),
])
def test_a_line_break_the_rules_form_is_a_space_too_so_normalizing_twice_changes_nothing(text, normalized):
    """Squeezing whitespace or turning ; : or a line break into a space formed a new <br />, which only normalizing
    again took out: a file prepare wrote (normalized once) was trained on great food, the raw review on great<br and
    />food (and predict read it so). The rules are applied until nothing changes (text.FORMED_BREAKS)."""
    assert normalize_text(text) == normalized
    assert normalize_text(normalized) == normalized


def _normalized_until_unchanged(text):
    """The rules (as read before text.FORMED_BREAKS) applied again and again until nothing changes, to the text
    without the characters that rule and text.MARKS drop (a zero-width space a space): what normalize_text gives, in
    fewer steps (one a nested line break: text._without_formed_line_breaks)."""
    for invisible in "\ufeff\u2060\u00ad":
        text = text.replace(invisible, "")
    text = re.sub("[\ufe00-\ufe0f\U000e0100-\U000e01ef\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]", "", text)
    text = text.replace("\u200b", " ")
    again = normalize_text(text, QUOTES_AND_BREAKS)
    while again != text:
        text, again = again, normalize_text(again, QUOTES_AND_BREAKS)
    return text


@pytest.mark.parametrize("spaced", ["ΟΔΟΣ ΑΛΛΟΣ", "Α Σ", "ΑΣ Β.", "ΟΔΟΣ  ΕΝΑ"])
def test_a_zero_width_space_splits_words_as_a_space_does_even_before_a_capital_sigma(spaced):
    """A zero-width space was read as a space after lowercasing: to Unicode's final-sigma rule it was a character
    nobody sees (case-ignorable), so ΟΔΟΣ\u200bΑΛΛΟΣ was οδοσ and αλλος, where ΟΔΟΣ ΑΛΛΟΣ is οδος and αλλος: the
    word, as the model knows it, unknown (and Α\u200bΣ was α and ς). Natively too (text.lowered, which it reads)."""
    from fasttext_lib import native_features

    hidden = spaced.replace(" ", "\u200b")
    assert tokenize(hidden) == tokenize(spaced) == _normalized_until_unchanged(hidden).split()
    if native_features.available():
        assert native_features.tokenize(hidden) == tokenize(spaced)
        counted = native_features.count_tokens([hidden, "x", spaced])
        assert counted.words[:len(tokenize(spaced))] == tokenize(spaced)


@pytest.mark.parametrize("marked, plain", [
    ("Loved it ❤️", "Loved it ❤"),  # U+FE0F: phones write the red heart so, keyboards without it
    ("☺\ufe0e fine", "☺ fine"),  # the text-style selector
    ("שלום\u200f עולם", "שלום עולם"),  # a right-to-left mark, as web pages and phones put it after a Hebrew word
    ("\u200eok\u200e \u061cمرحبا", "ok مرحبا"),  # a left-to-right mark, the Arabic letter mark
    ("\u202bembedded\u202c \u202aa\u202c \u202dx\u202e", "embedded a x"),  # embeddings, overrides, their pop
    ("\u2066isolated\u2069 \u2067b\u2068c\u2069", "isolated bc"),  # isolates
    ("葛\U000e0100城 \U000e01ef", "葛城"),  # an ideographic variation selector (Japanese names), the last one
    ("ΟΔΟΣ\u200f ΑΣ\u200eΒ Σ\ufe0f", "ΟΔΟΣ ΑΣΒ Σ"),  # to the final-sigma rule they were as absent (case-ignorable)
    ("cafe\u200f\u0301 e\ufe0f\u0301", "café é"),  # between a letter and its accent: composed once dropped
    ("great\u200f!\u200f <br\u200e />x", "great! <br />x"),
])
def test_emoji_variation_selectors_and_direction_marks_are_read_as_nothing(marked, plain):
    """Text that reads the same was other words: ❤️ (U+2764 U+FE0F) and ❤ two features (opposite answers on a small
    model), and a Hebrew or Arabic word with a direction mark (U+200E, U+200F, U+061C: copied from a web page or a
    phone) another word than without. Variation selectors and bidirectional controls are dropped, as a soft hyphen
    is (text.MARKS), natively too (text.lowered, which it reads)."""
    from fasttext_lib import native_features

    assert tokenize(marked) == tokenize(plain)
    assert normalize_text(marked) == normalize_text(plain) == _normalized_until_unchanged(marked)
    if native_features.available():
        assert native_features.tokenize(marked) == tokenize(plain)


def test_joiners_and_emoji_tags_stay_parts_of_words():
    # the zero-width (non-)joiners change how Persian words and emoji are written (می‌خواهم, 👨‍👩), and tag
    # characters spell a subdivision's flag (England's): not dropped with the variation selectors
    england = "🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f"
    assert tokenize(f"می\u200cخواهم 👨\u200d👩 {england}") == ["می\u200cخواهم", "👨\u200d👩", england]


def test_normalize_text_is_idempotent_on_random_texts_of_line_break_pieces_and_every_code_point():
    for text in random_texts_of_line_break_pieces(30_000):
        once = normalize_text(text)
        assert normalize_text(once) == once == _normalized_until_unchanged(text), repr(text)
    points = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]  # (lowered changes none of
    for start in range(0, len(points), 2000):  # its own results: the rules' repetitions leave it out)
        text = " ".join(f"A{c}b<br{c}/>{c}" for c in points[start:start + 2000])
        once = normalize_text(text)
        assert normalize_text(once) == once


def test_line_breaks_formed_inside_each_other_take_one_pass_not_one_each():
    # each repetition of the rules took out one level: a review of 1.2 MB of nested ones took some 10^11 steps
    nested = "<br" * 200_000 + "\t/>" * 200_000
    assert normalize_text(nested) == "" and normalize_text("x" + nested + "y") == "x y"
    assert tokenize("x" + nested + ";" + nested + "y") == ["x", "y"]


def test_older_forms_read_a_line_break_their_rules_formed_as_they_were_trained():
    # bundles and checkpoints of an older rule read text as they were trained: the rules once, <br\t/> two words
    for form in (QUOTES_AND_BREAKS, NFC_TOKENS):
        assert tokenize("great<br\t/>food", form) == ["great<br", "/>food"]
    assert tokenize("a<br<br>/>b", QUOTES_AND_BREAKS) == ["a<br", "/>b"]
    assert tokenize("a<br<br>/>b", NFC_TOKENS) == ["a<br<br>/>b"]
    assert tokenize("great<br\t/>food") == ["great", "food"] and tokenize("a<br<br>/>b") == ["a", "b"]


# Text in NFC whose lowercase is not (a Greek capital with tonos and a combining ypogegrammeni, U+0345, or with
# dialytika and a combining acute), or whose dropped '"' stood between a letter and its accent.
NOT_NFC_ONCE_NORMALIZED = ["ΆͅΙ ΤΡΌΛΪ́ ΉͅΣ", 'wor"\u0301d x"\u0307', "Ὰͅ Ώͅ Ϋ́"]


@pytest.mark.parametrize("text", NOT_NFC_ONCE_NORMALIZED)
def test_normalize_text_is_idempotent_and_its_tokens_are_nfc_for_any_text(text):
    """Lowercasing (or dropping a '"') after NFC could leave a word out of NFC, and normalizing it again composed it:
    a file prepare / write_fasttext wrote (normalized) and training read (normalized again) had the word "ᾴι"
    (U+1FB4), which predict, normalizing the raw review once, spelled "ά" + U+0345 + "ι" and never found."""
    assert nfc(text) == text
    once = normalize_text(text)
    assert normalize_text(once) == once
    assert all(unicodedata.is_normalized("NFC", token) for token in tokenize(text))
    assert tokenize(once) == tokenize(text)


def test_a_model_trained_on_a_written_fasttext_file_finds_the_words_of_the_raw_texts(tmp_path):
    from fasttext_lib.features import Featurizer

    raw = NOT_NFC_ONCE_NORMALIZED + ["plain words, here!"]
    path = str(tmp_path / "prepared.train")
    write_fasttext(LabeledTexts(["a", "b"] * 2, raw), path)
    vocab = Featurizer.fit(read_labeled(path).texts).vocab.token_to_idx
    assert [t for text in raw for t in tokenize(text) if t not in vocab] == []


def test_reads_fasttext_format(tmp_path):
    p = tmp_path / "d.train"
    p.write_text("__label__pos good food\n\n__label__neg bad\n")
    data = read_labeled(str(p))
    assert data.labels == ["pos", "neg"] and data.texts == ["good food", "bad"]


def test_reads_zhang_csv_with_escapes_and_several_columns(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text('"2","A ""great"" place\\nreally"\n"1","Title here","Body, with comma"\n')
    data = read_labeled(str(p))
    assert data.labels == ["2", "1"]
    assert data.texts == ['A "great" place really', "Title here Body, with comma"]


def test_format_can_be_forced(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text('"1","x"\n')
    with pytest.raises(FastTextError, match="no __label__"):
        read_labeled(str(p), fmt="fasttext")


def test_csv_round_trip(tmp_path):
    data = LabeledTexts(["1", "2"], ['say "hi"\nthere', "plain, text"])
    write_csv(data, str(tmp_path / "x.csv"))
    back = read_labeled(str(tmp_path / "x.csv"))
    assert back.labels == data.labels
    assert back.texts == ['say "hi" there', "plain, text"]  # line breaks become spaces


def test_write_fasttext_normalizes(tmp_path):
    write_fasttext(LabeledTexts(["1"], ["Hello, World!"]), str(tmp_path / "o.train"))
    assert (tmp_path / "o.train").read_text() == "__label__1 hello , world !\n"


@pytest.mark.parametrize("content, message", BAD_TRAINING_FILES)
def test_bad_files_give_one_line_errors(tmp_path, content, message):
    p = tmp_path / "bad.txt"
    p.write_bytes(content)
    with pytest.raises(FastTextError, match=message) as info:
        read_labeled(str(p))
    assert "\n" not in str(info.value)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(FastTextError, match="no such file"):
        read_labeled(str(tmp_path / "nope.csv"))
    with pytest.raises(FastTextError, match="directory"):
        read_labeled(str(tmp_path))


def test_synthetic_corpus_is_deterministic_and_yelp_shaped():
    a, b = generate_reviews(300, seed=7), generate_reviews(300, seed=7)
    assert a.labels == b.labels and a.texts == b.texts
    assert generate_reviews(300, seed=8).texts != a.texts
    assert set(a.labels) == {"1", "2"}
    lengths = sorted(len(t.split()) for t in a.texts)
    assert 60 < lengths[len(lengths) // 2] < 200  # median words per review, like Yelp
    joined = " ".join(a.texts)
    assert "\\n" in " ".join(csv_line(l, t) for l, t in zip(a.labels, a.texts)) or "<br />" in joined
    assert any(c.isupper() for c in joined)
    assert set(generate_reviews(200, num_classes=4, seed=1).labels) == {"1", "2", "3", "4"}


def test_iter_examples_rejects_unknown_format(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("__label__1 a\n")
    with pytest.raises(FastTextError, match="unknown data format"):
        list(iter_examples(str(p), fmt="xml"))


def test_classes_are_the_sorted_raw_labels_not_their_names():
    from fasttext_lib.data import CountedTexts

    data = LabeledTexts(["10", "2", "1", "2"], ["a", "b", "c", "d"], names={"1": "negative", "2": "positive"})
    assert data.classes() == ["1", "2", "10"] and data.display_labels()[:3] == ["10", "positive", "negative"]
    assert CountedTexts(["b", "a", "b"], None, []).classes() == ["a", "b"]


def test_stripped_start_is_the_start_of_the_stripped_line():
    """lines.stripped_start (predict's format tests look at a first line's start without copying all of it) gives
    ``line.strip()[:n]`` (``boms``: after its BOMs), whatever whitespace, BOMs and lengths the line has."""
    import itertools

    from fasttext_lib.lines import stripped_start

    pieces = ["", " ", "\t", "\u3000", "\x1c", "\u2028", "\ufeff", "a", "\"", "{", "ab c", "\u00a0"]
    for parts in itertools.product(pieces, repeat=4):
        line = "".join(parts)
        for n in (0, 1, 2, 3, 5, 20):
            assert stripped_start(line, n) == line.strip()[:n], (line, n)
            assert stripped_start(line, n, boms=True) == line.lstrip("\ufeff").strip()[:n], (line, n)


def test_names_of_str_whole_float_classes_follow_them_when_they_are_read_as_whole_numbers():
    """``LabeledTexts(df["label"], df["text"], names={"1.0": "negative", ...})`` of str classes "1.0", "2.0": the one
    rule reads those classes as 1 and 2 (data.whole_number_classes), and train refused the names it was given for them
    ('train_data.names gives a name to class(es) '1.0', '2.0' that the training data does not have'), where it
    trained with them before. The names follow the classes; names of classes kept as written stay as given."""
    from fasttext_lib.data import LabeledTexts, as_read_from_a_file

    read = as_read_from_a_file(LabeledTexts(["1.0", "2.0", "1.0"], ["a", "b", "c"], {"1.0": "neg", "2.0": "pos"}), "d")
    assert (read.labels, read.names) == (["1", "2", "1"], {"1": "neg", "2": "pos"})
    read = as_read_from_a_file(LabeledTexts([1.0, 2.0], ["a", "b"], {"1.0": "neg", "2": "pos"}), "d")
    assert (read.labels, read.names) == (["1", "2"], {"1": "neg", "2": "pos"})
    read = as_read_from_a_file(LabeledTexts(["1.0", "1.5"], ["a", "b"], {"1.0": "one"}), "d")
    assert (read.labels, read.names) == (["1.0", "1.5"], {"1.0": "one"})


def _one_token_by_tokenize(word, form):
    tokens = tokenize(word, form)
    return tokens[0] if len(tokens) == 1 else None


# Words a .vec holds, of every kind the rule treats apart: lowercase and capitalized ASCII and Cyrillic, Greek with a
# final sigma, NFD accents (and ones lowercasing leaves out of NFC), Hebrew with direction marks, emoji with variation
# selectors, typographic and ASCII punctuation, characters nobody sees, Unicode spaces, formed line breaks, Turkish İ
_WORDS_OF_EVERY_KIND = ["good", "Good", "GOOD", "привет", "Привет", "ПРИВЕТ", "ΟΔΟΣ", "Οδος", "οδος", "cafe\u0301",
                        "CAFE\u0301", "\u0391\u0345\u0301", "\u03aa\u0301", "\u200f\u05e9\u05dc\u05d5\u05dd",
                        "\u05e9\u05dc\u05d5\u05dd\u200e", "\u2764\ufe0f", "\u2764\ufe0e", "\U0001f44d\ufe0f", "\u2019",
                        "don\u2019t", "Don't", "'", "\u201cgood\u201d", "\ufeffgreat", "go\u00adod", "a\u200bb",
                        "a\u00a0b", "a\u3000b", "\u2028", "x<br>y", "<br", "a<br\t/>b", "<unk>", "<UNK>", "...",
                        "\u0130stanbul", "\u0130", "a;b", "a:b", "(x)", "\u00e9t\u00e9", "\u00c9T\u00c9", "\u3042",
                        "\U0001d400", "\u2126", "\u212b", "\u1e9e"]


@pytest.mark.parametrize("form", UNICODE_FORMS)
def test_one_token_is_what_tokenize_reads_a_word_as(form):
    """text.one_token (what a .vec word is to the training rule, read fast for words the rule can only lowercase) is
    tokenize's one token, or None: for words of every kind, and for every character on its own and capitalized
    after a letter, in every form a bundle may record."""
    from fasttext_lib.text import one_token

    characters = [chr(c) for c in range(0x110000) if not 0xd800 <= c <= 0xdfff]
    step = 1 if form == TRAINING_FORM else 7  # (every character for the rule of models trained now; a sample else)
    words = _WORDS_OF_EVERY_KIND + characters[::step] + ["A" + c for c in characters[::step * 13]]
    for word in words:
        word = nfc(word)  # (its callers give it the word in NFC)
        assert one_token(word, form) == _one_token_by_tokenize(word, form), (word, form)


def test_the_whitespace_one_token_looks_for_is_the_whitespace_tokens_are_split_at():
    """one_token finds whitespace with a regular expression's \\s; the rules split tokens with str.split, whose
    whitespace is str.isspace's. If a Python changed either, a word holding such a space would be read as one token."""
    spaces = re.compile(r"\s")
    assert [c for c in range(0x110000) if spaces.match(chr(c))] == [c for c in range(0x110000) if chr(c).isspace()]
