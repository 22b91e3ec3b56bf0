import pytest
from django.core.exceptions import ValidationError

from orchestrator.harvest.curation.validators import (
    normalize_domain_name,
    normalize_seed,
    normalize_seed_lines,
    validate_regex_lines,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("example.fr", "example.fr"),
        ("  Example.FR ", "example.fr"),
        ("bücher.de", "xn--bcher-kva.de"),
        ("xn--bcher-kva.de", "xn--bcher-kva.de"),
        ("example.co.uk", "example.co.uk"),
        ("192.0.2.7", "192.0.2.7"),
        ("2001:db8::1", "2001:db8::1"),
    ],
)
def test_valid_domain_names_are_normalised(raw, expected):
    assert normalize_domain_name(raw) == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("www.example.com", "the domain is example.com"),
        ("co.uk", "no registrable part"),
        ("http://example.com/", "not a domain name"),
        ("exa mple.com", "not a valid"),
        ("-bad.dk", "hyphen"),
        ("", "empty"),
    ],
)
def test_invalid_domain_names_say_why(raw, message):
    with pytest.raises(ValidationError) as exc:
        normalize_domain_name(raw)
    assert message in " ".join(exc.value.messages)


def test_seeds_are_idna_normalised_and_keep_path_and_query():
    assert normalize_seed("HTTP://Bücher.DE") == "http://xn--bcher-kva.de/"
    assert normalize_seed("https://example.fr:8443/a/b?x=1#frag") == "https://example.fr:8443/a/b?x=1"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("ftp://example.fr/", "only http:// and https://"),
        ("example.fr", "only http:// and https://"),
        ("http:///path", "no host"),
        ("http://example.fr:99999/", "port"),
        ("http://user:pw@example.fr/", "user names"),
    ],
)
def test_bad_seeds_are_refused_with_the_reason(raw, message):
    with pytest.raises(ValueError, match=message):
        normalize_seed(raw)


def test_seed_lines_report_every_bad_line_with_its_number_and_keep_comments():
    with pytest.raises(ValidationError) as exc:
        normalize_seed_lines("http://a.dk/\n\nftp://b.dk/\n# http://c.dk/ inactive\nnot a url")
    messages = exc.value.messages
    assert len(messages) == 2
    assert messages[0].startswith("line 3: 'ftp://b.dk/'")
    assert messages[1].startswith("line 5: 'not a url'")
    assert normalize_seed_lines("HTTP://A.dk\n# old\n") == "http://a.dk/\n# old"


def test_regex_lines_name_the_line_that_does_not_compile():
    assert validate_regex_lines(".*/calendar/.*\n\n.*[?&]sid=.*") == ".*/calendar/.*\n.*[?&]sid=.*"
    with pytest.raises(ValidationError) as exc:
        validate_regex_lines(".*ok.*\n.*(unclosed\n")
    assert exc.value.messages[0].startswith("line 2: '.*(unclosed' is not a valid regular expression")


def test_a_huge_bad_seed_line_is_named_by_a_short_prefix():
    """A pasted 2 MB line was echoed whole in the form's error."""
    with pytest.raises(ValidationError) as raised:
        normalize_seed_lines("http://ok.fr/\n" + "javascript:" + "x" * 2_000_000)
    (message,) = raised.value.messages
    assert message.startswith("line 2: 'javascript:xxx") and "(2,000,011 characters)" in message
    assert message.endswith("only http:// and https:// URLs can be seeds") and len(message) < 200
