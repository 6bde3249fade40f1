"""SQL-like filter text to an `Expr` tree (tokenizer and recursive-descent parser).

Grammar, loosest binding first (keywords are case-insensitive)::

    filter    := or_expr EOF
    or_expr   := and_expr (OR and_expr)*
    and_expr  := not_expr (AND not_expr)*
    not_expr  := NOT not_expr | '(' or_expr ')' | predicate
    predicate := column op literal | literal op column
               | column [NOT] IN '(' literal (',' literal)* ')'
               | column IS [NOT] NULL
    column    := name ('.' name)*        name: bare, "double-quoted" or `backquoted`
    literal   := 'string' | [-]number | TRUE | FALSE | DATE 'YYYY-MM-DD' | TIMESTAMP '...'
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum

from shim.errors import InvalidFilterError
from shim.filters.expr import (
    MAX_LITERAL_DIGITS,
    RESERVED_WORDS,
    And,
    Column,
    CompareOp,
    Comparison,
    Expr,
    InList,
    IsNull,
    Literal,
    LiteralValue,
    Not,
    Or,
    parse_date_text,
    parse_timestamp_text,
)


class TokenKind(Enum):
    """Lexical classes of the filter language."""

    NAME = "name"
    QUOTED_NAME = "quoted name"
    STRING = "string"
    NUMBER = "number"
    OP = "operator"
    LPAREN = "'('"
    RPAREN = "')'"
    COMMA = "','"
    DOT = "'.'"
    MINUS = "'-'"
    END = "end of input"


@dataclass(frozen=True, slots=True)
class Token:
    """One token: its kind, decoded value, source text and 0-based offset in the filter."""

    kind: TokenKind
    value: str
    text: str
    pos: int

    def is_word(self, *words: str) -> bool:
        """True for a bare name equal (ignoring case) to one of `words`."""
        return self.kind is TokenKind.NAME and self.value.upper() in words

    def describe(self) -> str:
        if self.kind is TokenKind.END:
            return "end of input"
        return repr(self.text) if len(self.text) <= 60 else f"{self.text[:60]!r}... ({len(self.text)} characters)"


_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<string>'(?:[^']|'')*')
  | (?P<dquoted>"(?:[^"]|"")*")
  | (?P<bquoted>`(?:[^`]|``)*`)
  | (?P<number>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
  | (?P<name>[^\W\d]\w*)
  | (?P<op><=|>=|<>|!=|==|=|<|>)
  | (?P<punct>[(),.\-])
    """,
    re.VERBOSE,
)
_PUNCT = {
    "(": TokenKind.LPAREN,
    ")": TokenKind.RPAREN,
    ",": TokenKind.COMMA,
    ".": TokenKind.DOT,
    "-": TokenKind.MINUS,
}
_UNTERMINATED = {"'": "string literal", '"': "quoted column name", "`": "quoted column name"}
MAX_CONDITIONS = 256
"""Comparisons, IN lists and null checks one filter may hold (IN lists may be as long as the text)."""
MAX_NESTING = 64
"""How deep NOT and parentheses may nest."""


def _fail(source: str, pos: int, found: str, problem: str) -> InvalidFilterError:
    shown = source if len(source) <= 300 else f"{source[:300]}... ({len(source)} characters)"
    return InvalidFilterError(
        f"invalid filter at position {pos} (near {found}): {problem}; filter was: {shown}"
    )


def tokenize(source: str) -> list[Token]:
    """Splits filter text into tokens, ending with an END token."""
    tokens: list[Token] = []
    pos = 0
    while pos < len(source):
        match = _TOKEN.match(source, pos)
        if match is None:
            char = source[pos]
            if char in _UNTERMINATED:
                raise _fail(source, pos, repr(source[pos : pos + 20]), f"unterminated {_UNTERMINATED[char]}")
            raise _fail(source, pos, repr(char), "unexpected character")
        group, text = match.lastgroup, match.group()
        if group == "number" and match.end() < len(source) and re.match(r"[\w.]", source[match.end()]):
            bad = re.match(r"[\w.]+", source[pos:])
            raise _fail(source, pos, repr(bad.group() if bad else text), "malformed number")
        if group == "string":
            tokens.append(Token(TokenKind.STRING, text[1:-1].replace("''", "'"), text, pos))
        elif group in ("dquoted", "bquoted"):
            quote = text[0]
            tokens.append(Token(TokenKind.QUOTED_NAME, text[1:-1].replace(quote * 2, quote), text, pos))
        elif group == "number":
            tokens.append(Token(TokenKind.NUMBER, text, text, pos))
        elif group == "name":
            tokens.append(Token(TokenKind.NAME, text, text, pos))
        elif group == "op":
            tokens.append(Token(TokenKind.OP, text, text, pos))
        elif group == "punct":
            tokens.append(Token(_PUNCT[text], text, text, pos))
        pos = match.end()
    tokens.append(Token(TokenKind.END, "", "", len(source)))
    return tokens


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.tokens = tokenize(source)
        self.index = 0
        self.conditions = 0
        self.nesting = 0

    @property
    def current(self) -> Token:
        return self.tokens[self.index]

    def peek(self, offset: int = 1) -> Token:
        return self.tokens[min(self.index + offset, len(self.tokens) - 1)]

    def advance(self) -> Token:
        token = self.current
        self.index = min(self.index + 1, len(self.tokens) - 1)
        return token

    def error(self, problem: str, token: Token | None = None) -> InvalidFilterError:
        token = token or self.current
        return _fail(self.source, token.pos, token.describe(), problem)

    def expect(self, kind: TokenKind, what: str) -> Token:
        if self.current.kind is not kind:
            raise self.error(f"expected {what}")
        return self.advance()

    def expect_word(self, word: str) -> None:
        if not self.current.is_word(word):
            raise self.error(f"expected {word}")
        self.advance()

    # Boolean structure.

    def parse_filter(self) -> Expr:
        if self.current.kind is TokenKind.END:
            raise self.error("the filter is empty")
        expr = self.or_expr()
        after = self.current
        if after.kind is not TokenKind.END:
            raise self.error("expected AND, OR or the end of the filter")
        return expr

    def or_expr(self) -> Expr:
        expr = self.and_expr()
        while self.current.is_word("OR"):
            self.advance()
            expr = Or(expr, self.and_expr())
        return expr

    def and_expr(self) -> Expr:
        expr = self.not_expr()
        while self.current.is_word("AND"):
            self.advance()
            expr = And(expr, self.not_expr())
        return expr

    def not_expr(self) -> Expr:
        if self.current.is_word("NOT") or self.current.kind is TokenKind.LPAREN:
            # Trees are walked recursively: their depth is bounded (IN lists are flat).
            self.nesting += 1
            if self.nesting > MAX_NESTING:
                raise self.error(f"NOT and parentheses nest deeper than {MAX_NESTING} levels")
            try:
                if self.advance().kind is TokenKind.LPAREN:
                    expr = self.or_expr()
                    self.expect(TokenKind.RPAREN, "')' or AND/OR")
                    return expr
                return Not(self.not_expr())
            finally:
                self.nesting -= 1
        self.conditions += 1
        if self.conditions > MAX_CONDITIONS:
            raise self.error(f"the filter holds more than {MAX_CONDITIONS} conditions; "
                             "put many values of one column in an IN list")
        return self.predicate()

    # Predicates.

    def predicate(self) -> Expr:
        start = self.current
        left = self.operand()
        if isinstance(left, Literal):
            if self.current.kind is not TokenKind.OP:
                raise self.error(
                    "expected a comparison operator after a literal (IN and IS need a column first)"
                )
            op = CompareOp.parse(self.advance().value)
            right = self.operand()
            if isinstance(right, Literal):
                raise self.error("a comparison needs a column on one side", start)
            return Comparison(op.flipped(), right, left)
        if self.current.kind is TokenKind.OP:
            op = CompareOp.parse(self.advance().value)
            right = self.operand()
            if isinstance(right, Column):
                raise self.error(
                    "comparing two columns is not supported; compare a column with a literal", start
                )
            return Comparison(op, left, right)
        if self.current.is_word("IS"):
            self.advance()
            negated = self.current.is_word("NOT")
            if negated:
                self.advance()
            self.expect_word("NULL")
            return IsNull(left, negated)
        if self.current.is_word("NOT") and self.peek().is_word("IN"):
            self.advance()
            self.advance()
            return InList(left, self.in_values(), negated=True)
        if self.current.is_word("IN"):
            self.advance()
            return InList(left, self.in_values())
        raise self.error(f"expected a comparison operator, IN, NOT IN or IS [NOT] NULL after column {left}")

    def in_values(self) -> tuple[Literal, ...]:
        self.expect(TokenKind.LPAREN, "'(' after IN")
        if self.current.kind is TokenKind.RPAREN:
            raise self.error("an IN list needs at least one value")
        values = [self.literal()]
        while self.current.kind is TokenKind.COMMA:
            self.advance()
            values.append(self.literal())
        self.expect(TokenKind.RPAREN, "',' or ')' in the IN list")
        return tuple(values)

    # Operands.

    def operand(self) -> Column | Literal:
        token = self.current
        if token.kind is TokenKind.QUOTED_NAME:
            return self.column()
        if token.kind is TokenKind.NAME:
            word = token.value.upper()
            if word in ("DATE", "TIMESTAMP") and self.peek().kind is TokenKind.STRING:
                return self.literal()
            if word in ("TRUE", "FALSE"):
                return self.literal()
            if word == "NULL":
                raise self.error("NULL can only be used as IS NULL or IS NOT NULL")
            if word in RESERVED_WORDS:
                raise self.error(
                    f"expected a column or a literal, found the keyword {word} (quote a column name)"
                )
            return self.column()
        if token.kind in (TokenKind.STRING, TokenKind.NUMBER, TokenKind.MINUS):
            return self.literal()
        raise self.error("expected a column or a literal")

    def column(self) -> Column:
        parts = [self.name_part()]
        while self.current.kind is TokenKind.DOT:
            self.advance()
            parts.append(self.name_part())
        return Column(tuple(parts))

    def name_part(self) -> str:
        token = self.current
        if token.kind not in (TokenKind.NAME, TokenKind.QUOTED_NAME):
            raise self.error("expected a column name")
        if not token.value:
            raise self.error("a quoted column name cannot be empty")
        self.advance()
        return token.value

    def literal(self) -> Literal:
        token = self.advance()
        if token.kind is TokenKind.STRING:
            return Literal(token.value)
        if token.kind is TokenKind.MINUS:
            number = self.current
            if number.kind is not TokenKind.NUMBER:
                raise self.error("expected a number after '-'")
            self.advance()
            return self.number(number, "-" + number.value)
        if token.kind is TokenKind.NUMBER:
            return self.number(token, token.value)
        if token.is_word("TRUE", "FALSE"):
            return Literal(token.value.upper() == "TRUE")
        if token.is_word("DATE", "TIMESTAMP") and self.current.kind is TokenKind.STRING:
            text = self.advance()
            try:
                value: LiteralValue = (
                    parse_date_text(text.value) if token.is_word("DATE") else parse_timestamp_text(text.value)
                )
            except ValueError as exc:
                reason = str(exc) if len(str(exc)) <= 200 else f"{str(exc)[:200]}..."
                raise self.error(f"invalid {token.value.upper()} literal: {reason}", text) from None
            return Literal(value)
        if token.is_word("NULL"):
            raise self.error("NULL can only be used as IS NULL or IS NOT NULL", token)
        raise self.error(
            "expected a literal (a 'string', a number, TRUE, FALSE, DATE '...' or TIMESTAMP '...')", token
        )

    def number(self, token: Token, text: str) -> Literal:
        digits = len(text.partition("e")[0].partition("E")[0].lstrip("-").replace(".", ""))
        if digits > MAX_LITERAL_DIGITS:
            raise self.error(f"a number of {digits} digits: no column type holds more than {MAX_LITERAL_DIGITS}",
                             token)
        value = _number(text)
        if isinstance(value, float) and not math.isfinite(value):
            raise self.error("the number is out of the range of a double", token)
        return Literal(value)


def _number(text: str) -> int | Decimal | float:
    # Exact decimals keep DECIMAL columns exact; an exponent asks for a float.
    if "e" in text or "E" in text:
        return float(text)
    if "." in text:
        return Decimal(text)
    return int(text)


def parse_filter(text: str) -> Expr:
    """Parses filter text such as `city = 'sf' AND fare > 10.5`.

    Raises:
        InvalidFilterError: naming the 0-based position and the offending token.
    """
    return _Parser(text).parse_filter()


def parse_column(text: str) -> Column:
    """Parses a column reference (`a.b`, `"odd name"`, `` `x.y` ``) as written in a filter."""
    parser = _Parser(text)
    column = parser.column()
    if parser.current.kind is not TokenKind.END:
        raise parser.error("expected the end of the column name")
    return column
