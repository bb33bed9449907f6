#!/usr/bin/env python3
"""gen_jinja_cases.py OUT.json: renders small Jinja snippets with Python jinja2 configured exactly as
Hugging Face's apply_chat_template configures it, and writes {name, template, context, expected |
error} records. tests/unit/test_jinja.cpp checks vellum's interpreter against them byte for byte.

Needs jinja2 (3.1.x). Regenerate after adding cases: python3 tools/gen_jinja_cases.py tests/data/jinja_cases.json
"""
import json
import sys
from datetime import datetime

import jinja2
import jinja2.ext
from jinja2 import nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment


class Generation(jinja2.ext.Extension):
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def make_env():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[Generation, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda f: datetime(2026, 11, 21, 12, 0, 0).strftime(f)
    return env


MSGS = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi <there> & \"you\""},
        {"role": "assistant", "content": "Hello!", "tool_calls": [
            {"type": "function", "function": {"name": "f", "arguments": {"b": 1, "a": [1, 2.5, None, True]}}}]},
        {"role": "user", "content": "Ünïcödé → 日本語"}]
CTX = {"messages": MSGS, "n": 7, "f": 2.5, "s": "Hello World", "e": "", "l": [3, 1, 2], "d": {"b": 2, "a": 1},
       "words": ["b", "A", "c", "a"], "none": None, "t": True, "nested": {"x": {"y": [10, 20]}}}

CASES = [
    # whitespace control, trim_blocks, lstrip_blocks
    ("ws_trim_blocks", "{% if true %}\nyes\n{% endif %}\nafter"),
    ("ws_lstrip", "a\n    {% if true %}\n    b\n    {% endif %}\nc"),
    ("ws_dash", "a   {%- if true -%}   b   {%- endif -%}   c"),
    ("ws_var_dash", "x  {{- 1 -}}  y {{ 2 }} z"),
    ("ws_plus", "a\n    {%+ if true %}b{% endif %}"),
    ("ws_comment", "a\n  {# comment #}\nb {#- c -#}  c"),
    ("ws_var_no_lstrip", "a\n    {{ 'x' }}\n"),
    ("ws_inline_block", "x {% if true %}y{% endif %} z\n  {% set a = 1 %}  w"),
    ("ws_crlf", "a\r\n{% if true %}\r\nb\r\n{% endif %}\r\n"),
    ("raw", "{% raw %}{{ not evaluated }}{% endraw %}"),
    ("raw_ws", "a\n  {% raw %}\n  {{x}}\n  {% endraw %}\nb"),
    # literals and printing
    ("print_values", "{{ none }}|{{ true }}|{{ false }}|{{ 1 }}|{{ 1.0 }}|{{ 1.5e3 }}|{{ 0.1 + 0.2 }}|{{ 1e20 }}|{{ 1e-7 }}"),
    ("print_list", "{{ [1, 'a', none, true, 2.0, [\"x's\"], {'k': 'v'}] }}"),
    ("print_tuple", "{{ (1,) }}{{ (1, 2) }}{{ () }}"),
    ("print_dict", "{{ d }}{{ {'a': {'b': [1]}} }}"),
    ("print_str_repr", "{{ ['it\\'s', 'say \"hi\"', 'both \\' \"', 'tab\\there', 'nl\\n', 'ü'] }}"),
    ("string_escapes", "{{ 'a\\nb\\tc\\\\d\\'e' }}{{ \"\\u00e9\\x41\" }}"),
    ("adjacent_strings", "{{ 'a' 'b' \"c\" }}"),
    ("print_tuple_expr", "{{ 1, 2 }}"),
    # arithmetic
    ("arith", "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % -3 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 2 ** -1 }} {{ 7 / 2 }} {{ 4 / 2 }} {{ 7.5 // 2 }} {{ 2 ** 3 ** 2 }}"),
    ("arith_mixed", "{{ 1 + 2.0 }} {{ true + 1 }} {{ 'ab' * 3 }} {{ 3 * 'x' }} {{ [1] * 2 }} {{ [1] + [2] }} {{ -n }} {{ +f }}"),
    ("concat", "{{ 'a' ~ 1 ~ none ~ true ~ [1] ~ undefined_var }}"),
    ("str_plus_int_error", "{{ 'a' + 1 }}"),
    ("div_zero", "{{ 1 / 0 }}"),
    ("precedence", "{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 'x' ~ 1 + 2 }} {{ not true or true }} {{ -2 ** 2 }}"),
    # comparisons and logic
    ("compare", "{{ 1 < 2 < 3 }} {{ 1 < 3 < 2 }} {{ 1 == 1.0 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ none == none }} {{ 1 != 2 }}"),
    ("in_ops", "{{ 'a' in 'cat' }} {{ 2 in l }} {{ 'a' in d }} {{ 'z' not in d }} {{ 1 in (1, 2) }}"),
    ("and_or_values", "{{ 0 or 'x' }} {{ 'a' and 'b' }} {{ '' and 'b' }} {{ none or [] }}"),
    ("ternary", "{{ 'y' if t else 'n' }} {{ 'y' if none else 'n' }} [{{ 'y' if none }}]"),
    ("compare_type_error", "{{ 1 < 'a' }}"),
    # attribute / item access
    ("getattr", "{{ messages[0].role }} {{ messages[0]['content'] }} {{ nested.x.y[1] }} {{ nested['x']['y'][-1] }} {{ l.0 }}"),
    ("missing_attr", "[{{ d.missing }}] [{{ d['missing'] }}] [{{ l[10] }}] {{ d.missing is defined }}"),
    ("missing_attr_chain_error", "{{ d.missing.deeper }}"),
    ("undefined_chain_error", "{{ nope.x }}"),
    ("undefined_print", "[{{ nope }}] {{ nope is defined }} {{ nope is undefined }} {{ nope | default('dflt') }}"),
    ("none_attr", "[{{ none.x }}]"),
    ("dict_method_vs_key", "{{ {'items': 1}['items'] }} {{ d.get('a') }} {{ d.get('zz', 'no') }} {{ d.get('zz') }}"),
    ("slicing", "{{ l[1:] }} {{ l[:-1] }} {{ l[::-1] }} {{ s[:5] }} {{ s[::2] }} {{ s[-5:] }} {{ 'ünï'[1:] }} {{ l[5:] }}"),
    ("string_index", "{{ s[0] }}{{ s[-1] }}{{ 'ü日'[1] }}"),
    # loops
    ("for_basic", "{% for x in l %}{{ loop.index }}:{{ x }}{{ ',' if not loop.last }}{% endfor %}"),
    ("for_loop_vars", "{% for x in l %}[{{ loop.index0 }} {{ loop.revindex }} {{ loop.revindex0 }} {{ loop.first }} {{ loop.last }} {{ loop.length }} {{ loop.previtem }} {{ loop.nextitem }} {{ loop.cycle('a', 'b') }}]{% endfor %}"),
    ("for_else", "{% for x in [] %}x{% else %}empty{% endfor %}{% for x in l %}{% else %}no{% endfor %}"),
    ("for_filter", "{% for x in l if x > 1 %}{{ loop.index }}/{{ loop.length }}={{ x }} {% endfor %}"),
    ("for_unpack", "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{% for a, b in [[1, 2], (3, 4)] %}{{ a + b }}{% endfor %}"),
    ("for_dict", "{% for k in d %}{{ k }}{% endfor %}"),
    ("for_string", "{% for c in 'aü' %}[{{ c }}]{% endfor %}"),
    ("for_break_continue", "{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x > 4 %}{% break %}{% endif %}{{ x }}{% endfor %}"),
    ("for_nested_loop", "{% for a in [1, 2] %}{% set outer = loop %}{% for b in [1, 2] %}{{ outer.index }}{{ loop.index }} {% endfor %}{% endfor %}"),
    ("for_scope", "{% set x = 1 %}{% for i in range(2) %}{{ x }}{% set x = x + 1 %}{{ x }}{% endfor %}{{ x }}"),
    ("for_scope_iter", "{% for i in range(3) %}{% if i == 0 %}{% set y = 'a' %}{% endif %}[{{ y }}]{% endfor %}"),
    ("for_none_error", "{% for x in none %}{% endfor %}"),
    ("for_undefined", "{% for x in nope %}x{% else %}none{% endfor %}"),
    ("loop_changed", "{% for x in [1, 1, 2, 2, 3] %}{% if loop.changed(x) %}{{ x }}{% endif %}{% endfor %}"),
    ("range", "{{ range(3) | list }} {{ range(1, 7, 2) | list }} {{ range(5, 0, -2) | list }}"),
    # set / namespace
    ("set_basic", "{% set a = 1 %}{% set b, c = 2, 3 %}{{ a }}{{ b }}{{ c }}"),
    ("set_block", "{% set x %}  hi {{ 1 }}  {% endset %}[{{ x }}]"),
    ("set_block_filter", "{% set x | upper | trim %}  hi  {% endset %}[{{ x }}]"),
    ("namespace", "{% set ns = namespace(a=1, items=[]) %}{% for i in range(3) %}{% set ns.a = ns.a + i %}{% set ns.items = ns.items + [i] %}{% endfor %}{{ ns.a }} {{ ns.items }}"),
    ("namespace_from_dict", "{% set ns = namespace({'k': 'v'}, z=2) %}{{ ns.k }}{{ ns.z }}"),
    ("set_attr_non_namespace", "{% set d2 = {} %}{% set d2.x = 1 %}"),
    ("list_append_sandbox", "{% set ns = namespace(ids=[]) %}{% set _ = ns.ids.append(1) %}{{ ns.ids }}"),
    ("dict_pop_sandbox", "{{ d.pop('a') }}"),
    # macros
    ("macro_basic", "{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('A') }} {{ greet('B', '?') }} {{ greet(punct='.', name='C') }}"),
    ("macro_defaults_ref", "{% macro m(a, b=a ~ 'x') %}{{ a }}{{ b }}{% endmacro %}{{ m(1) }}"),
    ("macro_varargs_kwargs", "{% macro m(a) %}{{ a }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, 3, k=4) }}"),
    ("macro_too_many", "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, 2) }}"),
    ("macro_bad_kwarg", "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(b=1) }}"),
    ("macro_missing_arg", "{% macro m(a, b) %}[{{ a }}][{{ b }}]{% endmacro %}{{ m(1) }}"),
    ("macro_recursive", "{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1) | int }}{% endif %}{% endmacro %}{{ fact(5) }}"),
    ("macro_scope", "{% set y = 1 %}{% macro m() %}{{ y }}{% endmacro %}{% set y = 5 %}{{ m() }}"),
    ("macro_in_loop", "{% for i in range(2) %}{% macro m() %}{{ i }}{% endmacro %}{{ m() }}{% endfor %}"),
    ("macro_caller", "{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap('b') %}bold {{ 1 + 1 }}{% endcall %}"),
    ("macro_caller_args", "{% macro each(xs) %}{% for x in xs %}{{ caller(x) }}{% endfor %}{% endmacro %}{% call(item) each([1, 2]) %}<{{ item }}>{% endcall %}"),
    ("macro_returns_string", "{% macro m() %}5{% endmacro %}{{ m() ~ 'x' }} {{ m() | int + 1 }}"),
    ("filter_block", "{% filter upper %}hello {{ 'world' }}{% endfilter %}"),
    ("filter_block_chain", "{% filter trim | upper %}   hi   {% endfilter %}!"),
    ("with_block", "{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}[{{ a }}]"),
    ("generation_block", "{% generation %}gen {{ 1 }}{% endgeneration %}!"),
    ("if_elif_else", "{% for x in [1, 2, 3] %}{% if x == 1 %}one{% elif x == 2 %}two{% else %}many{% endif %} {% endfor %}"),
    # tests
    ("tests_types", "{{ 'a' is string }} {{ 1 is number }} {{ true is number }} {{ 1.0 is float }} {{ 1 is integer }} {{ true is integer }} {{ d is mapping }} {{ l is sequence }} {{ d is sequence }} {{ 'x' is iterable }} {{ 1 is iterable }} {{ none is none }} {{ true is boolean }} {{ 1 is boolean }}"),
    ("tests_values", "{{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(2) }} {{ 1 is eq 1 }} {{ 1 is equalto 2 }} {{ 'a' is in 'abc' }} {{ 2 is gt 1 }} {{ 2 is lt 1 }} {{ 'ab' is lower }} {{ 'AB' is upper }} {{ true is true }} {{ false is false }} {{ 0 is false }}"),
    ("tests_not", "{{ none is not none }} {{ 1 is not string }} {{ x is not defined }}"),
    ("tests_callable", "{{ range is callable }} {{ d.get is callable }} {{ 1 is callable }} {{ 'upper' is filter }} {{ 'odd' is test }}"),
    ("unknown_test_in_if", "{% if false %}{{ 1 is nosuchtest }}{% endif %}ok"),
    ("unknown_filter_toplevel", "{% if false %}{% endif %}{{ 1 | nosuchfilter }}"),
    ("unknown_filter_in_loop", "{% for x in [] %}{{ x | nosuchfilter }}{% endfor %}"),
    ("unknown_filter_in_if_taken", "{% if true %}{{ 1 | nosuchfilter }}{% endif %}"),
    # filters
    ("f_tojson", "{{ messages[2] | tojson }}\n{{ d | tojson(indent=2) }}\n{{ d | tojson(sort_keys=true) }}\n{{ 'ü\"\\n' | tojson }}\n{{ [1.0, 1e100, none, false] | tojson }}\n{{ {} | tojson(indent=2) }}{{ [] | tojson(indent=2) }}"),
    ("f_tojson_separators", "{{ d | tojson(separators=(',', ':')) }} {{ l | tojson(indent=1, separators=(', ', ' = ')) }}"),
    ("f_tojson_ensure_ascii", "{{ 'ü 日 😀' | tojson(ensure_ascii=true) }}"),
    ("f_tojson_undefined_error", "{{ nope | tojson }}"),
    ("f_tojson_generator_error", "{{ l | map('string') | tojson }}"),
    ("f_strings", "{{ '  x  ' | trim }}|{{ 'xxhixx' | trim('x') }}|{{ s | upper }}|{{ s | lower }}|{{ 'hello wORLD it\\'s' | title }}|{{ 'hELLO' | capitalize }}|{{ s | replace('o', '0') }}|{{ s | replace('l', 'L', 2) }}"),
    ("f_length", "{{ l | length }} {{ s | length }} {{ 'ünï' | length }} {{ d | count }} {{ nope | length }}"),
    ("f_first_last", "{{ l | first }} {{ l | last }} {{ s | first }} {{ [] | first }}|{{ d | first }}"),
    ("f_join", "{{ l | join(', ') }} {{ messages | join('|', attribute='role') }} {{ [1, none, 'a'] | join }}"),
    ("f_map", "{{ messages | map(attribute='role') | list }} {{ words | map('upper') | join }} {{ messages | map(attribute='nope', default='x') | list }} {{ l | map('string') | list }}"),
    ("f_select", "{{ l | select('odd') | list }} {{ l | reject('odd') | list }} {{ [0, 1, '', 'a'] | select | list }} {{ messages | selectattr('role', 'equalto', 'user') | map(attribute='content') | list }} {{ messages | rejectattr('tool_calls') | list | length }} {{ messages | selectattr('tool_calls', 'defined') | list | length }}"),
    ("f_default", "{{ nope | default('a') }} {{ '' | default('b') }} {{ '' | default('c', true) }} {{ none | default('d') }} {{ none | d('e', boolean=true) }}"),
    ("f_list_items", "{{ 'ab' | list }} {{ d | list }} {{ d | items | list }} {{ nope | items | list }}"),
    ("f_dictsort", "{{ {'b': 1, 'A': 2, 'c': 0} | dictsort }} {{ {'b': 1, 'A': 2} | dictsort(true) }} {{ {'b': 1, 'a': 2} | dictsort(by='value') }} {{ {'b': 1, 'a': 2} | dictsort(reverse=true) }}"),
    ("f_sort", "{{ words | sort }} {{ words | sort(case_sensitive=true) }} {{ l | sort(reverse=true) }} {{ messages | sort(attribute='role') | map(attribute='role') | list }}"),
    ("f_unique", "{{ ['a', 'A', 'b', 'a'] | unique | list }} {{ [1, 2, 1] | unique | list }}"),
    ("f_reverse", "{{ s | reverse }} {{ l | reverse | list }}"),
    ("f_numbers", "{{ '42' | int }} {{ '4.7' | int }} {{ 'x' | int }} {{ 'x' | int(5) }} {{ 3.9 | int }} {{ '3.5' | float }} {{ 'x' | float }} {{ -3 | abs }} {{ 2.5 | round }} {{ 3.5 | round }} {{ 2.675 | round(2) }} {{ 2.1 | round(method='ceil') }} {{ 42 | round }} {{ ' 12 ' | int }} {{ '0x1A' | int(base=16) }}"),
    ("f_string_filter", "{{ 1 | string }} {{ none | string }} {{ l | string }} {{ (1 | string) ~ 'x' }}"),
    ("f_indent", "{{ 'a\\nb\\n\\nc' | indent }}|{{ 'a\\nb' | indent(2, true) }}|{{ 'a\\n\\nb' | indent(2, blank=true) }}|{{ 'x\\ny' | indent('> ') }}"),
    ("f_safe_escape", "{{ '<a>' | safe }} {{ '<a> & \"q\"' | e }} {{ '<a>' | escape | escape }} {{ '<b>' | safe + '<i>' }} {{ 'x' + '<i>' | safe }}"),
    ("f_batch", "{{ [1, 2, 3, 4, 5] | batch(2) | list }} {{ [1, 2, 3] | batch(2, 0) | list }}"),
    ("f_sum_min_max", "{{ l | sum }} {{ l | min }} {{ l | max }} {{ words | min }} {{ words | max }} {{ messages | map(attribute='content') | map('length') | sum }}"),
    ("f_center_wordcount_truncate", "[{{ 'ab' | center(6) }}] {{ 'one two  three' | wordcount }} {{ 'hello world foo bar' | truncate(9) }} {{ 'hello world' | truncate(5, true, '..', 0) }}"),
    ("f_attr", "{{ d | attr('a') }}|{{ messages[0] | attr('role') }}|"),
    ("f_length_generator_error", "{{ l | select('odd') | length }}"),
    ("f_last_generator_error", "{{ l | select('odd') | last }}"),
    ("generator_truthy", "{{ 'yes' if [] | select('odd') else 'no' }}"),
    # string methods
    ("m_startswith", "{{ s.startswith('Hell') }} {{ s.endswith('x') }} {{ s.startswith(('x', 'H')) }} {{ s.endswith('World') }}"),
    ("m_split", "{{ 'a,b,,c'.split(',') }} {{ '  a  b '.split() }} {{ 'a b c'.split(' ', 1) }} {{ 'a b c'.rsplit(' ', 1) }} {{ '  a  b '.rsplit(None, 1) }} {{ 'abc'.split('b')[0] }}"),
    ("m_strip", "[{{ '  x \\n'.strip() }}] [{{ 'xxaxx'.lstrip('x') }}] [{{ 'xxaxx'.rstrip('x') }}] [{{ '\\u3000x'.strip() }}]"),
    ("m_case_find", "{{ s.upper() }} {{ s.lower() }} {{ 'ab cd'.title() }} {{ 'abc'.capitalize() }} {{ s.find('o') }} {{ s.find('z') }} {{ s.rfind('o') }} {{ s.count('l') }} {{ 'ünï'.find('ï') }} {{ 'aXb'.swapcase() }}"),
    ("m_replace", "{{ s.replace('l', 'L') }} {{ s.replace('l', 'L', 1) }} {{ 'ab'.replace('', '-') }}"),
    ("m_format", "{{ '{} and {}'.format('a', 1) }} {{ '{0}{1}{0}'.format('x', 'y') }} {{ '{name}!'.format(name='n') }} {{ '{{}}{}'.format(1) }} {{ '{:>5}|{:<3}|{:^5}'.format('a', 'b', 'c') }} {{ '{!r}'.format('q') }}"),
    ("m_join_misc", "{{ '-'.join(['a', 'b']) }} {{ 'abc'.isalpha() }} {{ '12'.isdigit() }} {{ ' '.isspace() }} {{ 'ab'.islower() }} {{ 'a\\nb'.splitlines() }} {{ 'abc'.removeprefix('a') }} {{ 'abc'.removesuffix('c') }} {{ '5'.zfill(3) }} {{ 'a=b=c'.partition('=') }}"),
    ("m_dict", "{{ d.keys() | list }} {{ d.values() | list }} {{ d.items() | list }} {% for k, v in d.items() %}{{ k }}{{ v }}{% endfor %}"),
    ("m_list", "{{ l.index(1) }} {{ l.count(3) }}"),
    ("m_unknown", "[{{ s.nosuch }}]"),
    ("m_unknown_call", "{{ s.nosuch() }}"),
    # globals
    ("raise_exception", "{% if true %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}"),
    ("strftime", "{{ strftime_now('%Y-%m-%d %H:%M %B %b %d %A') }}"),
    ("dict_global", "{{ dict(a=1, b=2) }} {{ dict([('x', 1)]) }}"),
    ("joiner", "{% set j = joiner(' | ') %}{% for x in l %}{{ j() }}{{ x }}{% endfor %}"),
    # errors
    ("syntax_unclosed_if", "{% if true %}x"),
    ("syntax_bad_expr", "{{ 1 + }}"),
    ("syntax_unknown_tag", "{% frobnicate %}"),
    ("syntax_unclosed_var", "{{ x "),
    ("syntax_unclosed_string", "{{ 'abc }}"),
    ("syntax_endfor_mismatch", "{% for x in l %}{% endif %}"),
    ("syntax_break_outside", "{% break %}"),
    ("syntax_extra_endif", "{% endif %}"),
    ("syntax_dict_in_expr", "{{ {'a': {'b': 1}} }}"),
    ("syntax_comment_unclosed", "{# abc"),
    ("call_undefined", "{{ nope() }}"),
    ("call_non_callable", "{{ 'a'() }}"),
    ("unpack_error", "{% for a, b in [[1, 2, 3]] %}{% endfor %}"),
    ("int_overflow_ok", "{{ 2 ** 62 }}"),
]


def main():
    env = make_env()
    out = []
    for name, template in CASES:
        rec = {"name": name, "template": template, "context": CTX}
        try:
            rec["expected"] = env.from_string(template).render(**CTX)
        except Exception as e:  # noqa: BLE001 - every failure is an expected error
            rec["error"] = f"{type(e).__name__}: {e}"
        out.append(rec)
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        json.dump({"generator": f"jinja2 {jinja2.__version__}, HF apply_chat_template conventions", "cases": out},
                  f, ensure_ascii=False, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
