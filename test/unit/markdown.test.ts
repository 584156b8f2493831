import { describe, it, expect } from "vitest";
import {
  emojiCodeForName,
  extractMentionCandidates,
  renderMarkdown,
  sanitizeUrl,
  type MarkdownContext,
  type MentionUser,
} from "../../server/lib/markdown/index.ts";

const html = (content: string, ctx?: Partial<MarkdownContext>): string =>
  renderMarkdown(content, ctx).html;

const emoji = (name: string, code: string): string => {
  const title = name.replace(/_/g, " ");
  return `<span aria-label="${title}" class="emoji emoji-${code}" role="img" title="${title}">:${name}:</span>`;
};

// ---------------------------------------------------------------------------
// Fixtures from Zulip's zerver/tests/fixtures/markdown_test_cases.json
// (input → expected_output; where Zulip's backend uses Pygments we compare with
// the fixture's marked_expected_output, which is the same minus highlighting).
// ---------------------------------------------------------------------------

const ZULIP_FIXTURES: Array<[name: string, input: string, expected: string]> = [
  ["empty", "", ""],
  ["basic_paragraph", "test_input", "<p>test_input</p>"],
  ["normal_text_test", "it's lunch time", "<p>it's lunch time</p>"],
  ["emphasis_text", "*foo*", "<p><em>foo</em></p>"],
  ["star_strong", "**foo**", "<p><strong>foo</strong></p>"],
  ["star_strong_em", "***foo***", "<p><strong><em>foo</em></strong></p>"],
  ["inline_code_html_entities", "`<&nbsp;>`", "<p><code>&lt;&amp;nbsp;&gt;</code></p>"],
  [
    "link_with_text",
    "[hello](https://github.com)",
    '<p><a href="https://github.com">hello</a></p>',
  ],
  [
    "link_without_text",
    "[](https://github.com)",
    '<p><a href="https://github.com">https://github.com</a></p>',
  ],
  [
    "link_with_empty_text",
    "[  ](https://github.com)",
    '<p><a href="https://github.com">https://github.com</a></p>',
  ],
  [
    "only_non_image_link",
    "https://github.com",
    '<p><a href="https://github.com">https://github.com</a></p>',
  ],
  [
    "not_fragment_link",
    "[foo](http://zulip.testserver/https://example.com)",
    '<p><a href="http://zulip.testserver/https://example.com">foo</a></p>',
  ],
  ["nl2br", "test\nbar", "<p>test<br>\nbar</p>"],
  ["nl2br_trailing_space", "test  ", "<p>test  </p>"],
  ["underscore_disabled", "_foo_", "<p>_foo_</p>"],
  ["underscore_strong_disabled", "__foo__", "<p>__foo__</p>"],
  ["safe_html", "<h1>stay normal</h1> thanks", "<p>&lt;h1&gt;stay normal&lt;/h1&gt; thanks</p>"],
  [
    "safe_html_with_simple_script_tag",
    "<script>alert(1)</script>",
    "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>",
  ],
  [
    "safe_html_nested_script_tag",
    "<<script>script>evil()<</script>/script>",
    "<p>&lt;&lt;script&gt;script&gt;evil()&lt;&lt;/script&gt;/script&gt;</p>",
  ],
  [
    "safe_html_nested_script_tag_with_parse_error",
    "<<x>script>evil()<</x>/script>",
    "<p>&lt;&lt;x&gt;script&gt;evil()&lt;&lt;/x&gt;/script&gt;</p>",
  ],
  [
    "safe_html_messed_up_complexly_nested_script_tags",
    '<scr<script></script>ipt type="text/javascript">alert("foo");</<script></script>script<del></del>>',
    '<p>&lt;scr&lt;script&gt;&lt;/script&gt;ipt type="text/javascript"&gt;alert("foo");&lt;/&lt;script&gt;&lt;/script&gt;script&lt;del&gt;&lt;/del&gt;&gt;</p>',
  ],
  [
    "safe_html_unclosed_tag",
    "<script src=http://xx.com/xss.js<b>",
    "<p>&lt;script src=http://xx.com/xss.js&lt;b&gt;</p>",
  ],
  [
    "safe_html_unclosed_tag_and_quotes",
    '<script src="http://xx.com/xss.js"<b>',
    '<p>&lt;script src="http://xx.com/xss.js"&lt;b&gt;</p>',
  ],
  [
    "safe_html_in_code",
    "~~~\n<h1>stay normal</h1>",
    '<div class="codehilite"><pre><span></span><code>&lt;h1&gt;stay normal&lt;/h1&gt;\n</code></pre></div>',
  ],
  [
    "codeblock_hilite_python (marked)",
    "Hamlet said:\n~~~~.python \ndef speak(self):\n    x = 1\n~~~~",
    '<p>Hamlet said:</p>\n<div class="codehilite" data-code-language="Python"><pre><span></span><code>def speak(self):\n    x = 1\n</code></pre></div>',
  ],
  [
    "codeblock_hilite_invented_language",
    "``` inventedlanguage\ndef speak(self):\n    x = 1\n```",
    '<div class="codehilite" data-code-language="inventedlanguage"><pre><span></span><code>def speak(self):\n    x = 1\n</code></pre></div>',
  ],
  [
    "codeblock_canonicalize_lang_alias (marked)",
    "``` py2\ndef speak(self):\n    x = 1\n```",
    '<div class="codehilite" data-code-language="Python 2.x"><pre><span></span><code>def speak(self):\n    x = 1\n</code></pre></div>',
  ],
  [
    "ampampamp",
    "& &amp; &amp;amp;\n~~~~\n& &amp; &amp;amp;\n~~~~\n    & &amp; &amp;amp;",
    '<p>&amp; &amp; &amp;amp;</p>\n<div class="codehilite"><pre><span></span><code>&amp; &amp;amp; &amp;amp;amp;\n</code></pre></div>\n<div class="codehilite"><pre><span></span><code>&amp; &amp;amp; &amp;amp;amp;\n</code></pre></div>',
  ],
  [
    "codeblock_multiline",
    "Hamlet once said\n~~~~\ndef func():\n    x = 1\n\n    y = 2\n\n    z = 3\n~~~~\nAnd all was good.",
    '<p>Hamlet once said</p>\n<div class="codehilite"><pre><span></span><code>def func():\n    x = 1\n\n    y = 2\n\n    z = 3\n</code></pre></div>\n<p>And all was good.</p>',
  ],
  [
    "codeblock_trailing_whitespace",
    "Hamlet once said\n~~~~\ndef func():\n    x = 1\n\n    y = 2\t\t\n\n    z = 3       \n~~~~\nAnd all was good.",
    '<p>Hamlet once said</p>\n<div class="codehilite"><pre><span></span><code>def func():\n    x = 1\n\n    y = 2\n\n    z = 3\n</code></pre></div>\n<p>And all was good.</p>',
  ],
  [
    "inline_code_spaces",
    "` outer ` ```    space    ```",
    "<p><code> outer </code> <code>    space    </code></p>",
  ],
  [
    "codeblock_backticks",
    "\n```\nfenced code\n```\n\n```inline code```\n",
    '<div class="codehilite"><pre><span></span><code>fenced code\n</code></pre></div>\n<p><code>inline code</code></p>',
  ],
  [
    "hanging_multi_codeblock",
    "Hamlet said:\n~~~~\ndef speak(self):\n    x = 1\n# Comment to make this code block longer to test Trac #1162\n~~~~\n\nThen he mentioned ````y = 4 + x**2```` and\n~~~~\ndef foobar(self):\n    return self.baz()",
    '<p>Hamlet said:</p>\n<div class="codehilite"><pre><span></span><code>def speak(self):\n    x = 1\n# Comment to make this code block longer to test Trac #1162\n</code></pre></div>\n<p>Then he mentioned <code>y = 4 + x**2</code> and</p>\n<div class="codehilite"><pre><span></span><code>def foobar(self):\n    return self.baz()\n</code></pre></div>',
  ],
  [
    "fenced_normal_quote",
    "Hamlet said:\n~~~ quote\nTo be or **not** to be.\n\nThat is the question\n~~~",
    "<p>Hamlet said:</p>\n<blockquote>\n<p>To be or <strong>not</strong> to be.</p>\n<p>That is the question</p>\n</blockquote>",
  ],
  [
    "fenced_nested_quote",
    "Hamlet said:\n~~~ quote\nPolonius said:\n> This above all: to thine ownself be true,\nAnd it must follow, as the night the day,\nThou canst not then be false to any man.\n\nWhat good advice!\n~~~",
    "<p>Hamlet said:</p>\n<blockquote>\n<p>Polonius said:</p>\n<blockquote>\n<p>This above all: to thine ownself be true,<br>\nAnd it must follow, as the night the day,<br>\nThou canst not then be false to any man.</p>\n</blockquote>\n<p>What good advice!</p>\n</blockquote>",
  ],
  [
    "multiple_blockquote_with_angular_bracket",
    "> Hello World!\n\n> Hello Universe!",
    "<blockquote>\n<p>Hello World!</p>\n</blockquote>\n<blockquote>\n<p>Hello Universe!</p>\n</blockquote>",
  ],
  [
    "multiple_blockquote_with_backticks_and_angular_bracket",
    "```quote\nText in\nmultiple lines.\n```\n\n> Text in a single line.",
    "<blockquote>\n<p>Text in<br>\nmultiple lines.</p>\n</blockquote>\n<blockquote>\n<p>Text in a single line.</p>\n</blockquote>",
  ],
  [
    "multiple_blockquote_with_quote_and_reply",
    "Hamlet said:\n~~~quote\nCan we talk ?\n~~~\n> Yes !!\n\nWelcome to Open Source.",
    "<p>Hamlet said:</p>\n<blockquote>\n<p>Can we talk ?</p>\n</blockquote>\n<blockquote>\n<p>Yes !!</p>\n</blockquote>\n<p>Welcome to Open Source.</p>",
  ],
  [
    "fenced_quote_with_hashtag",
    "```quote\n# line 1\n#line 2\n```",
    "<blockquote>\n<h1>line 1</h1>\n<p>#line 2</p>\n</blockquote>",
  ],
  [
    "fenced_quote_and_list",
    "Before:\n* One.\n* Two.\n\n```quote\nLists should work after a quote\n```\n\nAfter:\n* One.\n* Two.",
    "<p>Before:</p>\n<ul>\n<li>One.</li>\n<li>Two.</li>\n</ul>\n<blockquote>\n<p>Lists should work after a quote</p>\n</blockquote>\n<p>After:</p>\n<ul>\n<li>One.</li>\n<li>Two.</li>\n</ul>",
  ],
  [
    "dangerous_block_having_x",
    "xxxxxx xxxxx xxxxxxxx xxxx. x xxxx xxxxxxxxxx:\n\n```\"xxxx xxxx\\xxxxx\\xxxxxx\"```\n\nxxx xxxx xxxxx:```xx.xxxxxxx(x'^xxxx$', xx.xxxxxxxxx)```\n\nxxxxxxx'x xxxx xxxxxxxxxx ```'xxxx'```, xxxxx xxxxxxxxx xxxxx ^ xxx $ xxxxxx xxxxx xxxxxxxxxxxx xxx xxxx xx x xxxx xx xxxx xx xxx xxxxx xxxxxx?",
    "<p>xxxxxx xxxxx xxxxxxxx xxxx. x xxxx xxxxxxxxxx:</p>\n<p><code>\"xxxx xxxx\\xxxxx\\xxxxxx\"</code></p>\n<p>xxx xxxx xxxxx:<code>xx.xxxxxxx(x'^xxxx$', xx.xxxxxxxxx)</code></p>\n<p>xxxxxxx'x xxxx xxxxxxxxxx <code>'xxxx'</code>, xxxxx xxxxxxxxx xxxxx ^ xxx $ xxxxxx xxxxx xxxxxxxxxxxx xxx xxxx xx x xxxx xx xxxx xx xxx xxxxx xxxxxx?</p>",
  ],
  [
    "dangerous_block_having_backticks",
    "``` one ```\n\n``` two ```\n\n~~~~\nx = 1",
    '<p><code> one </code></p>\n<p><code> two </code></p>\n<div class="codehilite"><pre><span></span><code>x = 1\n</code></pre></div>',
  ],
  [
    "four_space_code_block",
    "    def foo(): pass",
    '<div class="codehilite"><pre><span></span><code>def foo(): pass\n</code></pre></div>',
  ],
  ["two_space_not_code_block", "  notcode", "<p>notcode</p>"],
  ["empty_single_blockquote", ">", "<p>&gt;</p>"],
  [
    "empty_multiple_blockquote",
    ">>>>>",
    "<blockquote>\n<blockquote>\n<blockquote>\n<blockquote>\n<p>&gt;</p>\n</blockquote>\n</blockquote>\n</blockquote>\n</blockquote>",
  ],
  ["hashheading_enabled", "# Hello world", "<h1>Hello world</h1>"],
  ["hashheading_needs_spaces", "#Hello world", "<p>#Hello world</p>"],
  ["hashheading_multiple_spaces", "#  Hello world", "<h1>Hello world</h1>"],
  ["hashheading_6_levels", "###### Hello world", "<h6>Hello world</h6>"],
  ["hashheading_7_levels", "####### Hello world", "<p>####### Hello world</p>"],
  [
    "reference_links_disabled",
    "Hello [world]\n\n[world]: https://google.com",
    '<p>Hello [world]</p>\n<p>[world]: <a href="https://google.com">https://google.com</a></p>',
  ],
  [
    "reference_links_disabled_2",
    "Hello [world][ref-name]\n\n[ref-name]: https://google.com",
    '<p>Hello [world][ref-name]</p>\n<p>[ref-name]: <a href="https://google.com">https://google.com</a></p>',
  ],
  [
    "ulist_standard_1",
    "Some text with a list:\n\n* One item\n* Two items\n* Three items",
    "<p>Some text with a list:</p>\n<ul>\n<li>One item</li>\n<li>Two items</li>\n<li>Three items</li>\n</ul>",
  ],
  [
    "ulist_standard_2",
    "Some text with a list:\n\n- One item\n- Two items\n- Three items",
    "<p>Some text with a list:</p>\n<ul>\n<li>One item</li>\n<li>Two items</li>\n<li>Three items</li>\n</ul>",
  ],
  [
    "ulist_standard_3",
    "Some text with a list:\n\n+ One item\n+ Two items\n+ Three items",
    "<p>Some text with a list:</p>\n<ul>\n<li>One item</li>\n<li>Two items</li>\n<li>Three items</li>\n</ul>",
  ],
  [
    "list_codeblock_interference",
    "para:\n\n    1. list-1\n    2. list-2\n      1. list-2a\n    3. list-3\n",
    '<p>para:</p>\n<div class="codehilite"><pre><span></span><code>1. list-1\n2. list-2\n  1. list-2a\n3. list-3\n</code></pre></div>',
  ],
  [
    "ulist_mixed_bullets",
    "Combine four lists:\n\n* One\n- Two\n+ Three\n- Four\n- Five",
    "<p>Combine four lists:</p>\n<ul>\n<li>One</li>\n<li>Two</li>\n<li>Three</li>\n<li>Four</li>\n<li>Five</li>\n</ul>",
  ],
  [
    "ulist_hanging",
    "Some text with a hanging list:\n* One item\n* Two items\n* Three items",
    "<p>Some text with a hanging list:</p>\n<ul>\n<li>One item</li>\n<li>Two items</li>\n<li>Three items</li>\n</ul>",
  ],
  [
    "ulist_codeblock_interference",
    "* One \n  * Two\n\n    Two continued\n    This shouldn't be a code block\n",
    "<ul>\n<li>One <ul>\n<li>\n<p>Two</p>\n<p>Two continued<br>\nThis shouldn't be a code block</p>\n</li>\n</ul>\n</li>\n</ul>",
  ],
  [
    "ulist_hanging_mixed",
    "Plain list\n\n* Alpha\n\n* Beta\n\nThen hang it off:\n* Ypsilon\n* Zeta",
    "<p>Plain list</p>\n<ul>\n<li>\n<p>Alpha</p>\n</li>\n<li>\n<p>Beta</p>\n</li>\n</ul>\n<p>Then hang it off:</p>\n<ul>\n<li>Ypsilon</li>\n<li>Zeta</li>\n</ul>",
  ],
  [
    "ulist_hanging_multi",
    "Plain list\n* Alpha\n* Beta\n\nAnd again:\n* A\n* B\n* C\n\nOnce more for feeling:\n* Q\n* E\n* D",
    "<p>Plain list</p>\n<ul>\n<li>Alpha</li>\n<li>Beta</li>\n</ul>\n<p>And again:</p>\n<ul>\n<li>A</li>\n<li>B</li>\n<li>C</li>\n</ul>\n<p>Once more for feeling:</p>\n<ul>\n<li>Q</li>\n<li>E</li>\n<li>D</li>\n</ul>",
  ],
  [
    "ulist_hanging_quoted",
    "```quote\nSome text with a hanging list inside quote:\n* one\n* two\n* three\n```",
    "<blockquote>\n<p>Some text with a hanging list inside quote:</p>\n<ul>\n<li>one</li>\n<li>two</li>\n<li>three</li>\n</ul>\n</blockquote>",
  ],
  [
    "ulist_nested_ulist_two_space_indent",
    "Nested list\n* I am outer list\n  * I am inner nested list first item\n  * I am inner nested list second item",
    "<p>Nested list</p>\n<ul>\n<li>I am outer list<ul>\n<li>I am inner nested list first item</li>\n<li>I am inner nested list second item</li>\n</ul>\n</li>\n</ul>",
  ],
  [
    "ulist_codeblock",
    "~~~\nint x = 3\n* 4;\n~~~",
    '<div class="codehilite"><pre><span></span><code>int x = 3\n* 4;\n</code></pre></div>',
  ],
  [
    "malformed_fence",
    "~~~~~~~~xxxxxxxxx:  xxxxxxxxxxxx xxxxx x xxxxxxxx~~~~~~",
    "<p>~~~~~~~~xxxxxxxxx:  xxxxxxxxxxxx xxxxx x xxxxxxxx~~~~~~</p>",
  ],
  [
    "strikthrough_basic",
    "I like ~~software~~ hardware",
    "<p>I like <del>software</del> hardware</p>",
  ],
  [
    "strikthrough_multiword_with_no_space_in_between",
    "I ~~like software~~ love hardware",
    "<p>I <del>like software</del> love hardware</p>",
  ],
  [
    "strikthrough_multiword_with_space_in_between",
    "I ~~ like software ~~ love hardware",
    "<p>I <del> like software </del> love hardware</p>",
  ],
  [
    "strikthrough_link",
    "~~test http://xx.xx link~~",
    '<p><del>test <a href="http://xx.xx">http://xx.xx</a> link</del></p>',
  ],
  ["emphasis_code", "const char *x = (char *)y", "<p>const char *x = (char *)y</p>"],
  [
    "emphasis_with_space",
    "A *foo bar* is a *baz quux*",
    "<p>A <em>foo bar</em> is a <em>baz quux</em></p>",
  ],
  [
    "emphasis_with_html",
    "*<h1>Hello world</h1>*",
    "<p><em>&lt;h1&gt;Hello world&lt;/h1&gt;</em></p>",
  ],
  [
    "strong_with_html",
    "**<h1>Hello world</h1>**",
    "<p><strong>&lt;h1&gt;Hello world&lt;/h1&gt;</strong></p>",
  ],
  ["star_emoji", "**:smile:**", `<p><strong>${emoji("smile", "1f642")}</strong></p>`],
  [
    "auto_renumbered_list_from",
    "3. A\n3. B\n3. C\n3. D",
    '<ol start="3">\n<li>A</li>\n<li>B</li>\n<li>C</li>\n<li>D</li>\n</ol>',
  ],
  [
    "auto_renumbered_list_blankline",
    "1. A\n\n1. B\n\n1. C\n\n1. D\nordinary paragraph\n1. AA\n\n1. BB",
    "<ol>\n<li>\n<p>A</p>\n</li>\n<li>\n<p>B</p>\n</li>\n<li>\n<p>C</p>\n</li>\n<li>\n<p>D<br>\nordinary paragraph</p>\n</li>\n<li>\n<p>AA</p>\n</li>\n<li>\n<p>BB</p>\n</li>\n</ol>",
  ],
  [
    "linkify_interference",
    "link: xx, x xxxxx xx xxxx xx\n\n[xxxxx #xx](http://xxxxxxxxx:xxxx/xxx/xxxxxx%78xxxx/xx/):**xxxxxxx**\n\nxxxxxxx xxxxx xxxx xxxxx:\n`xxxxxx`: xxxxxxx\n`xxxxxx`: xxxxx\n`xxxxxx`: xxxxx xxxxx",
    '<p>link: xx, x xxxxx xx xxxx xx</p>\n<p><a href="http://xxxxxxxxx:xxxx/xxx/xxxxxx%78xxxx/xx/">xxxxx #xx</a>:<strong>xxxxxxx</strong></p>\n<p>xxxxxxx xxxxx xxxx xxxxx:<br>\n<code>xxxxxx</code>: xxxxxxx<br>\n<code>xxxxxx</code>: xxxxx<br>\n<code>xxxxxx</code>: xxxxx xxxxx</p>',
  ],
  [
    "blockquote_inline_image",
    ">Google logo today:\n>https://www.google.com/images/srpr/logo4w.png\n>Kinda boring",
    '<blockquote>\n<p>Google logo today:<br>\n<a href="https://www.google.com/images/srpr/logo4w.png">https://www.google.com/images/srpr/logo4w.png</a><br>\nKinda boring</p>\n</blockquote>',
  ],
  [
    "tables",
    "This is a table:\n\nFirst header  | Second header\n------------- | -------------\nContent cell  | Content cell\nContent cell  | Content cell\n",
    "<p>This is a table:</p>\n<table>\n<thead>\n<tr>\n<th>First header</th>\n<th>Second header</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>Content cell</td>\n<td>Content cell</td>\n</tr>\n<tr>\n<td>Content cell</td>\n<td>Content cell</td>\n</tr>\n</tbody>\n</table>",
  ],
  [
    "multiline_strong",
    "You can check out **any time you'd like\nBut you can never leave**",
    "<p>You can check out **any time you'd like<br>\nBut you can never leave**</p>",
  ],
  [
    "many_emoji",
    "test :smile: again :poop:\n:) foo:)bar x::y::z :wasted waste: :fakeemojithisshouldnotrender:",
    `<p>test ${emoji("smile", "1f642")} again ${emoji("poop", "1f4a9")}<br>\n:) foo:)bar x::y::z :wasted waste: :fakeemojithisshouldnotrender:</p>`,
  ],
  ["translate_emoticons_not_enabled", ":)", "<p>:)</p>"],
  ["random_emoji_1", ":airplane:", `<p>${emoji("airplane", "2708")}</p>`],
  [
    "zulip_emoji",
    ":zulip:",
    '<p><img alt=":zulip:" class="emoji" src="/static/generated/emoji/images/emoji/unicode/zulip.png" title="zulip"></p>',
  ],
  ["random_emoji_2", ":poop:", `<p>${emoji("poop", "1f4a9")}</p>`],
  ["emoji_sequence_one", "🤷\u200d♀️", `<p>${emoji("woman_shrugging", "1f937-200d-2640")}</p>`],
  [
    "emoji_sequence_two",
    "👁\u200d🗨 #️⃣",
    `<p>${emoji("eye_in_speech_bubble", "1f441-200d-1f5e8")} ${emoji("hash", "0023-20e3")}</p>`,
  ],
  [
    "unrecognized_emoji_sequence_three",
    "normal lemon 🍋, purple lemon? 🍋\u200d🟪",
    `<p>normal lemon ${emoji("lemon", "1f34b")}, purple lemon? 🍋\u200d🟪</p>`,
  ],
  [
    "unrecognized_emoji_sequence_four",
    "medium-skinned person riding scooter back and forth: 🧑🏽\u200d🛴\u200d↩️",
    "<p>medium-skinned person riding scooter back and forth: 🧑🏽\u200d🛴\u200d↩️</p>",
  ],
  [
    "unrecognized_emoji_sequence_skin_tone",
    "man in manual wheelchair: dark skin tone 👨🏿\u200d🦽",
    "<p>man in manual wheelchair: dark skin tone 👨🏿\u200d🦽</p>",
  ],
  [
    "emojis_without_space",
    ":cat:hello:dog::rabbit:",
    `<p>${emoji("cat", "1f408")}hello${emoji("dog", "1f415")}${emoji("rabbit", "1f407")}</p>`,
  ],
  [
    "emojis_newline",
    ":cat:\n:dog:",
    `<p>${emoji("cat", "1f408")}<br>\n${emoji("dog", "1f415")}</p>`,
  ],
  ["not_emoji", ":not_an_emoji:", "<p>:not_an_emoji:</p>"],
  ["unicode_emoji", "💩", `<p>${emoji("poop", "1f4a9")}</p>`],
  ["two_unicode_emoji", "💩💩", `<p>${emoji("poop", "1f4a9")}${emoji("poop", "1f4a9")}</p>`],
  [
    "two_unicode_emoji_separated_by_text",
    "💩 word 💩",
    `<p>${emoji("poop", "1f4a9")} word ${emoji("poop", "1f4a9")}</p>`,
  ],
  [
    "miscellaneous_symbols_and_pictographs",
    "Merry Christmas!!🎄",
    `<p>Merry Christmas!!${emoji("holiday_tree", "1f384")}</p>`,
  ],
  [
    "miscellaneous_and_dingbats_emoji",
    "⚓➗",
    `<p>${emoji("anchor", "2693")}${emoji("division", "2797")}</p>`,
  ],
  [
    "supplemental_symbols_and_pictographs",
    "I am a robot 🤖.",
    `<p>I am a robot ${emoji("robot", "1f916")}.</p>`,
  ],
  [
    "miscellaneous_symbols_and_arrows",
    "Black upward arrow ⬆️",
    `<p>Black upward arrow ${emoji("up", "2b06")}</p>`,
  ],
  [
    "unicode_emoji_without_space",
    "Extra👽Terrestrial",
    `<p>Extra${emoji("alien", "1f47d")}Terrestrial</p>`,
  ],
  [
    "unicode_emojis_new_line",
    "👽\n👽",
    `<p>${emoji("alien", "1f47d")}<br>\n${emoji("alien", "1f47d")}</p>`,
  ],
  [
    "emoji_alongside_punctuation",
    ":smile:, :smile:; :smile:",
    `<p>${emoji("smile", "1f642")}, ${emoji("smile", "1f642")}; ${emoji("smile", "1f642")}</p>`,
  ],
  [
    "new_emoji_test",
    ":avocado:, :kiwi:, :selfie:, :gear:, :comet:, :gold:",
    `<p>${emoji("avocado", "1f951")}, ${emoji("kiwi", "1f95d")}, ${emoji("selfie", "1f933")}, ${emoji("gear", "2699")}, ${emoji("comet", "2604")}, ${emoji("gold", "1f947")}</p>`,
  ],
  [
    "emoji_pipeline_newline",
    "The winner is:\nsmiley:smiley:",
    `<p>The winner is:<br>\nsmiley${emoji("smiley", "1f603")}</p>`,
  ],
  [
    "emoji_pipeline_emphasis",
    "Testing *:smiley*: :sm*iley*: Testing",
    "<p>Testing <em>:smiley</em>: :sm<em>iley</em>: Testing</p>",
  ],
  [
    "emoji_pipeline_link",
    "Visit https:smiley://google.com.",
    `<p>Visit https${emoji("smiley", "1f603")}//google.com.</p>`,
  ],
  ["skin_tones_are_banned", ":skin-tone-2: :skin-tone-3:", "<p>:skin-tone-2: :skin-tone-3:</p>"],
  [
    "emojis_with_zwj_are_banned",
    "Emojis like :man-girl-girl: which have ZWJ are banned for now.",
    "<p>Emojis like :man-girl-girl: which have ZWJ are banned for now.</p>",
  ],
  [
    "valid_emoji_preceded_by_invalid_emoji",
    "This is :invalidemoji: which should not prevent rendering :smile:",
    `<p>This is :invalidemoji: which should not prevent rendering ${emoji("smile", "1f642")}</p>`,
  ],
  [
    "ulist_with_inline_code",
    "gonna take a break for a bit--all yours if you want to play around too. what I did:\n\n* install cmake\n* git clone zulip desktop\n* run `cmake-gui ..` in `c:\\zulip\\zulip-desktop\\msvcbuild`\n* hit configure/generate until it generated the msvc project (had to make a fix to some cmake files)\n* opened vs2013 \n* tried to build\n",
    "<p>gonna take a break for a bit--all yours if you want to play around too. what I did:</p>\n<ul>\n<li>install cmake</li>\n<li>git clone zulip desktop</li>\n<li>run <code>cmake-gui ..</code> in <code>c:\\zulip\\zulip-desktop\\msvcbuild</code></li>\n<li>hit configure/generate until it generated the msvc project (had to make a fix to some cmake files)</li>\n<li>opened vs2013 </li>\n<li>tried to build</li>\n</ul>",
  ],
  [
    "timestamp_backend_markdown_and_marked",
    "<time:31 Dec 2017>",
    '<p><time datetime="2017-12-31T00:00:00Z">31 Dec 2017</time></p>',
  ],
  [
    "timestamp_invalid_input",
    "<time:<alert(1)>>",
    // Feature level 451: an invalid time is its escaped text, no longer a timestamp-error span.
    "<p>&lt;time:&lt;alert(1)&gt;&gt;</p>",
  ],
  ["timestamp_incorrect", "<time:**hello world**>", "<p>&lt;time:**hello world**&gt;</p>"],
  [
    "timestamp_unix",
    "Let's meet at <time:1496701800>.",
    '<p>Let\'s meet at <time datetime="2017-06-05T22:30:00Z">1496701800</time>.</p>',
  ],
  ["tex_escaped", "`$$a$$`", "<p><code>$$a$$</code></p>"],
  ["tex_inline_prohibited_newline", "$$x=3\ny=4$$", "<p>$$x=3<br>\ny=4$$</p>"],
  [
    "tex_dollar_smiley",
    "$$_$$ is a fun money-related smiley!",
    "<p>$$_$$ is a fun money-related smiley!</p>",
  ],
  [
    "tex_multiple_dollars",
    "We are going to make some $$$ or maybe even $$$$!",
    "<p>We are going to make some $$$ or maybe even $$$$!</p>",
  ],
  ["tex_non_matching_dollar_count", "$foo is$$", "<p>$foo is$$</p>"],
  [
    "tex_fenced_tex (marked)",
    "```tex\n\n\\pi \\textbf{ is not } 3.14\n```",
    '<div class="codehilite" data-code-language="TeX"><pre><span></span><code>\\pi \\textbf{ is not } 3.14\n</code></pre></div>',
  ],
  [
    "spoilers_fenced_spoiler",
    "```spoiler header\ncontent\n```\noutside spoiler\n",
    '<div class="spoiler-block"><div class="spoiler-header">\n<p>header</p>\n</div><div class="spoiler-content" aria-hidden="true">\n<p>content</p>\n</div></div>\n<p>outside spoiler</p>',
  ],
  [
    "spoilers_empty_header",
    "```spoiler\ncontent\n```\noutside spoiler\n",
    '<div class="spoiler-block"><div class="spoiler-header">\n</div><div class="spoiler-content" aria-hidden="true">\n<p>content</p>\n</div></div>\n<p>outside spoiler</p>',
  ],
  [
    "spoilers_script_tags",
    "```spoiler <script>alert(1)</script>\n<script>alert(1)</script>\n```",
    '<div class="spoiler-block"><div class="spoiler-header">\n<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n</div><div class="spoiler-content" aria-hidden="true">\n<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n</div></div>',
  ],
  [
    "spoilers_block_quote",
    "~~~quote\n```spoiler header\ncontent\n```\noutside spoiler\n~~~\noutside quote",
    '<blockquote>\n<div class="spoiler-block"><div class="spoiler-header">\n<p>header</p>\n</div><div class="spoiler-content" aria-hidden="true">\n<p>content</p>\n</div></div>\n<p>outside spoiler</p>\n</blockquote>\n<p>outside quote</p>',
  ],
  [
    "spoilers_with_header_markdown",
    "```spoiler [Header](https://example.com) :smile:\ncontent\n```",
    `<div class="spoiler-block"><div class="spoiler-header">\n<p><a href="https://example.com">Header</a> ${emoji("smile", "1f642")}</p>\n</div><div class="spoiler-content" aria-hidden="true">\n<p>content</p>\n</div></div>`,
  ],
  [
    "embedded_link_inside_Bold",
    "**[Static types in Python](https://blog.zulip.com/2016/10/13/static-types-in-python-oh-mypy)**",
    '<p><strong><a href="https://blog.zulip.com/2016/10/13/static-types-in-python-oh-mypy">Static types in Python</a></strong></p>',
  ],
  [
    "embedded_link_inside_Italic",
    "*[Static types in Python](https://blog.zulip.com/2016/10/13/static-types-in-python-oh-mypy)*",
    '<p><em><a href="https://blog.zulip.com/2016/10/13/static-types-in-python-oh-mypy">Static types in Python</a></em></p>',
  ],
  [
    "edge_case_embedded_link_inside_Bold",
    "<h1>**<h1>[<h2>Static types in Python</h2>](https://blog.zulip.com/2016/10/13/static-types-in-python-oh-mypy)</h1>**</h1>",
    '<p>&lt;h1&gt;<strong>&lt;h1&gt;<a href="https://blog.zulip.com/2016/10/13/static-types-in-python-oh-mypy">&lt;h2&gt;Static types in Python&lt;/h2&gt;</a>&lt;/h1&gt;</strong>&lt;/h1&gt;</p>',
  ],
  [
    "edge_case_embedded_link_inside_Italic",
    "<h1>*<h1>[<h2>Static types in Python</h2>](https://blog.zulip.com/2016/10/13/static-types-in-python-oh-mypy)</h1>*</h1>",
    '<p>&lt;h1&gt;<em>&lt;h1&gt;<a href="https://blog.zulip.com/2016/10/13/static-types-in-python-oh-mypy">&lt;h2&gt;Static types in Python&lt;/h2&gt;</a>&lt;/h1&gt;</em>&lt;/h1&gt;</p>',
  ],
  [
    "telephone_sms_link",
    "[call me](tel:+14155551234) [or maybe not](sms:+14155551234)",
    '<p><a href="tel:+14155551234">call me</a> <a href="sms:+14155551234">or maybe not</a></p>',
  ],
  [
    "codeblock_hilite_shebang_feature_no_path_1 (marked)",
    '```\n#!python\nprint("Hello World")\n```',
    '<div class="codehilite"><pre><span></span><code>#!python\nprint(&quot;Hello World&quot;)\n</code></pre></div>',
  ],
];

describe("Zulip markdown_test_cases.json fixtures", () => {
  it.each(ZULIP_FIXTURES)("%s", (_name, input, expected) => {
    expect(html(input)).toBe(expected);
  });

  it("fragment_link: links into the realm become relative", () => {
    expect(
      html("[foo](http://zulip.testserver/#narrow/stream/1-Denmark)", {
        realmUrl: "http://zulip.testserver",
      }),
    ).toBe('<p><a href="#narrow/stream/1-Denmark">foo</a></p>');
    expect(
      html("http://zulip.testserver/#narrow/stream/1-Denmark", {
        realmUrl: "http://zulip.testserver",
      }),
    ).toBe(
      '<p><a href="#narrow/stream/1-Denmark">http://zulip.testserver/#narrow/stream/1-Denmark</a></p>',
    );
  });
});

// ---------------------------------------------------------------------------
// Bare-URL autolinking (the fixture file's "linkify_tests": input, template, url)
// ---------------------------------------------------------------------------

const LINKIFY_TESTS: Array<[input: string, template: string, url: string]> = [
  ["http://www.google.com", "<p>%s</p>", "http://www.google.com"],
  ["https://www.google.com", "<p>%s</p>", "https://www.google.com"],
  ["http://www.theregister.co.uk/foo/bar", "<p>%s</p>", "http://www.theregister.co.uk/foo/bar"],
  [" some text https://www.google.com/", "<p>some text %s</p>", "https://www.google.com/"],
  ["with short example.com url", "<p>with short %s url</p>", "example.com"],
  ["t.co", "<p>%s</p>", "t.co"],
  ["readme.md", "<p>readme.md</p>", ""],
  ["go to views.org please", "<p>go to %s please</p>", "views.org"],
  ["http://foo.com/blah_blah/", "<p>%s</p>", "http://foo.com/blah_blah/"],
  ["python class views.py is", "<p>python class views.py is</p>", ""],
  ["with www www.zulip.com/foo ok?", "<p>with www %s ok?</p>", "www.zulip.com/foo"],
  ["allow questions like foo.com?", "<p>allow questions like %s?</p>", "foo.com"],
  ['"is.gd/foo/ "', '<p>"%s "</p>', "is.gd/foo/"],
  ["end of sentence https://t.co.", "<p>end of sentence %s.</p>", "https://t.co"],
  [
    "(Something like http://foo.com/blah_blah)",
    "<p>(Something like %s)</p>",
    "http://foo.com/blah_blah",
  ],
  ['"is.gd/foo/"', '<p>"%s"</p>', "is.gd/foo/"],
  ['end with a quote www.google.com"', '<p>end with a quote %s"</p>', "www.google.com"],
  [
    "end with an exclamation www.google.com!",
    "<p>end with an exclamation %s!</p>",
    "www.google.com",
  ],
  ["http://www.guardian.co.uk/foo/bar", "<p>%s</p>", "http://www.guardian.co.uk/foo/bar"],
  [
    "from http://supervisord.org/running.html:",
    "<p>from %s:</p>",
    "http://supervisord.org/running.html",
  ],
  ["http://raven.io", "<p>%s</p>", "http://raven.io"],
  ["at https://zulip.com/api. Check it!", "<p>at %s. Check it!</p>", "https://zulip.com/api"],
  ["goo.gl/abc", "<p>%s</p>", "goo.gl/abc"],
  ["I spent a year at ucl.ac.uk", "<p>I spent a year at %s</p>", "ucl.ac.uk"],
  ["http://a.cc/i/FMXO", "<p>%s</p>", "http://a.cc/i/FMXO"],
  ["http://fmota.eu/blog/test.html", "<p>%s</p>", "http://fmota.eu/blog/test.html"],
  ["http://j.mp/14Hwm3X", "<p>%s</p>", "http://j.mp/14Hwm3X"],
  ["http://localhost:9991/?show_debug=1", "<p>%s</p>", "http://localhost:9991/?show_debug=1"],
  ["anyone before? (http://a.cc/i/FMXO)", "<p>anyone before? (%s)</p>", "http://a.cc/i/FMXO"],
  [
    "(http://en.wikipedia.org/wiki/Each-way_(bet))",
    "<p>(%s)</p>",
    "http://en.wikipedia.org/wiki/Each-way_(bet)",
  ],
  [
    "(http://en.wikipedia.org/wiki/Each-way_(bet)_(more_parens))",
    "<p>(%s)</p>",
    "http://en.wikipedia.org/wiki/Each-way_(bet)_(more_parens)",
  ],
  [
    "http://en.wikipedia.org/wiki/Qt_(framework)",
    "<p>%s</p>",
    "http://en.wikipedia.org/wiki/Qt_(framework)",
  ],
  [
    "http://fr.wikipedia.org/wiki/Fichier:SMirC-facepalm.svg",
    "<p>%s</p>",
    "http://fr.wikipedia.org/wiki/Fichier:SMirC-facepalm.svg",
  ],
  [
    "https://jira.atlassian.com/browse/JRA-31953?page=com.atlassian.jira.plugin.system.issuetabpanels:comment-tabpanel",
    "<p>%s</p>",
    "https://jira.atlassian.com/browse/JRA-31953?page=com.atlassian.jira.plugin.system.issuetabpanels:comment-tabpanel",
  ],
  [
    "http://web.archive.org/web/20120630032016/http://web.mit.edu/mitcard/idpolicies.html",
    "<p>%s</p>",
    "http://web.archive.org/web/20120630032016/http://web.mit.edu/mitcard/idpolicies.html",
  ],
  [
    "http://www.postgresql.org/message-id/14040.1364490185@sss.pgh.pa.us",
    "<p>%s</p>",
    "http://www.postgresql.org/message-id/14040.1364490185@sss.pgh.pa.us",
  ],
  ['javascript:alert("hi");.com', '<p>javascript:alert("hi");.com</p>', ""],
  ["javascript:foo.com", "<p>javascript:%s</p>", "foo.com"],
  ["javascript://foo.com", "<p>javascript://foo.com</p>", ""],
  ["foobarscript://foo.com", "<p>foobarscript://foo.com</p>", ""],
  ["about:blank.com", "<p>about:%s</p>", "blank.com"],
  ["[foo](javascript:foo.com)", "<p>[foo](javascript:%s)</p>", "foo.com"],
  ["[foo](javascript://foo.com)", "<p>[foo](javascript://foo.com)</p>", ""],
  ["aim:addbuddy?screenname=foo", "<p>aim:addbuddy?screenname=foo</p>", ""],
  ["itms://itunes.com/apps/appname", "<p>itms://itunes.com/apps/appname</p>", ""],
  ["[foo](itms://itunes.com/apps/appname)", "<p>[foo](itms://itunes.com/apps/appname)</p>", ""],
  ["1 [](foo://) 3 [](foo://) 5", "<p>1 [](foo://) 3 [](foo://) 5</p>", ""],
  ['javascript:<i>"foo&bar"</i>', '<p>javascript:&lt;i&gt;"foo&amp;bar"&lt;/i&gt;</p>', ""],
  [
    '[foo](javascript:<i>"foo&bar"</i>)',
    '<p>[foo](javascript:&lt;i&gt;"foo&amp;bar"&lt;/i&gt;)</p>',
    "",
  ],
  [
    "http://zulip.testserver/https://example.com",
    "<p>%s</p>",
    "http://zulip.testserver/https://example.com",
  ],
  ["a@b.com", "<p>%s</p>", "a@b.com"],
  ["<a@b.com>", "<p>&lt;%s&gt;</p>", "a@b.com"],
  ["a@b.com/foo", "<p>a@b.com/foo</p>", ""],
  ["http://leo@foo.com/my/file", "<p>%s</p>", "http://leo@foo.com/my/file"],
  [
    "http://example.com/something?with,commas,in,url, but not at end",
    "<p>%s, but not at end</p>",
    "http://example.com/something?with,commas,in,url",
  ],
  [
    "http://www.yelp.com/biz/taim-mobile-falafel-and-smoothie-truck-new-york#query",
    "<p>%s</p>",
    "http://www.yelp.com/biz/taim-mobile-falafel-and-smoothie-truck-new-york#query",
  ],
  [
    " some text https://www.google.com/baz_(match)?with=foo&bar=baz with extras",
    "<p>some text %s with extras</p>",
    "https://www.google.com/baz_(match)?with=foo&amp;bar=baz",
  ],
  [
    "hash it http://foo.com/blah_(wikipedia)_blah#cite-1",
    "<p>hash it %s</p>",
    "http://foo.com/blah_(wikipedia)_blah#cite-1",
  ],
  [
    "http://technet.microsoft.com/en-us/library/Cc751099.rk20_25_big(l=en-us).mov",
    "<p>%s</p>",
    "http://technet.microsoft.com/en-us/library/Cc751099.rk20_25_big(l=en-us).mov",
  ],
  [
    "https://metacpan.org/module/Image::Resize::OpenCV",
    "<p>%s</p>",
    "https://metacpan.org/module/Image::Resize::OpenCV",
  ],
  ["foo.com/a::trollface::b", "<p>%s</p>", "foo.com/a::trollface::b"],
  ["a.commandstuff()", "<p>a.commandstuff()</p>", ""],
  ["love...it", "<p>love...it</p>", ""],
  ["sorry,http://example.com/", "<p>sorry,%s</p>", "http://example.com/"],
  [
    "two nested parens https://zulip.com/(we_like_(to_nest_)_nest)_nest",
    "<p>two nested parens %s</p>",
    "https://zulip.com/(we_like_(to_nest_)_nest)_nest",
  ],
  [
    "three nested parens https://zulip.com/(we_like_(to_(and_)nest_)_nest)_nest",
    "<p>three nested parens %s</p>",
    "https://zulip.com/(we_like_(to_(and_)nest_)_nest)_nest",
  ],
  [
    "four nested parens https://zulip.com/(we_like_(to_n(e)st_)_n(es)t)_nest",
    "<p>four nested parens %s</p>",
    "https://zulip.com/(we_like_(to_n(e)st_)_n(es)t)_nest",
  ],
  [
    "six nested parens https://zulip.com/(we_like_((t(d(o(___)o)o))o_nest_)_nest)_nest",
    "<p>six nested parens %s</p>",
    "https://zulip.com/(we_like_((t(d(o(___)o)o))o_nest_)_nest)_nest",
  ],
  [
    "eight is too many https://zulip.com/(we_like_((t(d(o(_(1(2)1)__)o)o))o_nest_)_nest)_nest",
    "<p>eight is too many https://zulip.com/(we_like_((t(d(o(_(1(2)1)__)o)o))o_nest_)_nest)_nest</p>",
    "",
  ],
  [
    "nested with autodetection zulip.us/(we_like_(to_n(e)st_)_n(es)t)_nest",
    "<p>nested with autodetection %s</p>",
    "zulip.us/(we_like_(to_n(e)st_)_n(es)t)_nest",
  ],
];

describe("bare URL autolinking (fixture linkify_tests)", () => {
  it.each(LINKIFY_TESTS)("%s", (input, template, url) => {
    let expected = template;
    if (url) {
      // Same construction as Zulip's test: href is the sanitized URL.
      const raw = url.replace(/&amp;/g, "&");
      const href = (sanitizeUrl(raw) ?? "").replace(/&/g, "&amp;");
      expected = template.replace("%s", `<a href="${href}">${url}</a>`);
    }
    expect(html(input)).toBe(expected);
  });

  it("adds http:// to bare domains and mailto: to e-mail addresses", () => {
    expect(html("see example.com")).toBe('<p>see <a href="http://example.com">example.com</a></p>');
    expect(html("mail a@b.com")).toBe('<p>mail <a href="mailto:a@b.com">a@b.com</a></p>');
  });

  it("does not link inside code or inside explicit links", () => {
    expect(html("`http://x.com`")).toBe("<p><code>http://x.com</code></p>");
    expect(html("[see http://x.com](http://y.com)")).toBe(
      '<p><a href="http://y.com">see http://x.com</a></p>',
    );
    expect(html("```\nhttp://x.com\n```")).toBe(
      '<div class="codehilite"><pre><span></span><code>http://x.com\n</code></pre></div>',
    );
  });

  it("does not treat emoji syntax in URLs as emoji", () => {
    expect(html("http://x.com/:smile:/y")).toBe(
      '<p><a href="http://x.com/:smile:/y">http://x.com/:smile:/y</a></p>',
    );
  });

  it("handles a long paragraph of URLs quickly", () => {
    const content = Array.from(
      { length: 300 },
      (_, i) => `see https://example.com/p/${i}?q=(a)&b=${i}.`,
    ).join(" ");
    const start = performance.now();
    const out = html(content);
    expect(performance.now() - start).toBeLessThan(1000);
    expect(out.match(/<a href=/g)?.length).toBe(300);
  });
});

// ---------------------------------------------------------------------------
// Escaping / XSS
// ---------------------------------------------------------------------------

describe("escaping and XSS", () => {
  it.each([
    ["[x](javascript:alert(1))", "<p>[x](javascript:alert(1))</p>"],
    ["[x](JaVaScRiPt:alert(1))", "<p>[x](JaVaScRiPt:alert(1))</p>"],
    ["[x](&#106;avascript:alert(1))", "<p>[x](&#106;avascript:alert(1))</p>"],
    ["[x](data:text/html;base64,PHNjcmlwdD4=)", "<p>[x](data:text/html;base64,PHNjcmlwdD4=)</p>"],
    ["[x](vbscript:msgbox)", "<p>[x](vbscript:msgbox)</p>"],
  ])("drops dangerous link %s", (input, expected) => {
    const r = renderMarkdown(input);
    expect(r.html).toBe(expected);
    expect(r.html).not.toContain("<a");
    expect(r.hasLink).toBe(false);
  });

  it("escapes raw HTML everywhere", () => {
    expect(html('<img src=x onerror="alert(1)">')).toBe(
      '<p>&lt;img src=x onerror="alert(1)"&gt;</p>',
    );
    expect(html("# <b>x</b>")).toBe("<h1>&lt;b&gt;x&lt;/b&gt;</h1>");
    expect(html("* <iframe>")).toBe("<ul>\n<li>&lt;iframe&gt;</li>\n</ul>");
    expect(html("```\n<script>'x'</script>\n```")).toBe(
      '<div class="codehilite"><pre><span></span><code>&lt;script&gt;&#39;x&#39;&lt;/script&gt;\n</code></pre></div>',
    );
  });

  it("escapes attribute values", () => {
    expect(html('[x](http://a.com/"onmouseover=alert(1))')).toBe(
      '<p><a href="http://a.com/&quot;onmouseover=alert(1)">x</a></p>',
    );
    // Only [a-zA-Z0-9_+-./#] can reach data-code-language; the rest of the line is an ignored header.
    expect(html('``` py"><script>\nx\n```')).toBe(
      '<div class="codehilite" data-code-language="Python"><pre><span></span><code>x\n</code></pre></div>',
    );
  });

  it("keeps entities verbatim and escapes bare ampersands", () => {
    expect(html("AT&T &copy; &#169; &#xA9; &nbsp;")).toBe(
      "<p>AT&amp;T &copy; &#169; &#xA9; &nbsp;</p>",
    );
  });

  it("has no backslash escapes and no image syntax (Zulip)", () => {
    expect(html("![alt](http://example.com/a.png)")).toBe(
      '<p>!<a href="http://example.com/a.png">alt</a></p>',
    );
  });

  it("mention and emoji names are escaped", () => {
    const ctx = ctxWith([{ id: 9, fullName: "<b>Evil</b> & co" }]);
    expect(html("@**<b>Evil</b> & co**", ctx)).toBe(
      '<p><span class="user-mention" data-user-id="9">@&lt;b&gt;Evil&lt;/b&gt; &amp; co</span></p>',
    );
  });
});

// ---------------------------------------------------------------------------
// Mentions and channel links
// ---------------------------------------------------------------------------

function ctxWith(
  users: MentionUser[],
  groups: Array<{ id: number; name: string }> = [],
  channels: Array<{ id: number; name: string }> = [],
): Partial<MarkdownContext> {
  const usersByName = new Map<string, MentionUser[]>();
  for (const u of users) {
    const key = u.fullName.toLowerCase();
    usersByName.set(key, [...(usersByName.get(key) ?? []), u]);
  }
  return {
    usersByName,
    usersById: new Map(users.map((u) => [u.id, u])),
    groupsByName: new Map(groups.map((g) => [g.name.toLowerCase(), g])),
    channelsByName: new Map(channels.map((c) => [c.name.toLowerCase(), c])),
  };
}

const HAMLET = { id: 10, fullName: "King Hamlet" };
const CORDELIA = { id: 11, fullName: "Cordelia, Lear's daughter" };
const ZOE = { id: 7, fullName: "Zoe" };
const TWIN1 = { id: 21, fullName: "Mark Twin" };
const TWIN2 = { id: 22, fullName: "Mark Twin" };
const CTX = ctxWith(
  [HAMLET, CORDELIA, ZOE, TWIN1, TWIN2],
  [
    { id: 5, name: "support" },
    { id: 6, name: "backend" },
  ],
  [
    { id: 1, name: "Denmark" },
    { id: 2, name: "Scotland" },
    { id: 3, name: "Stream #1234" },
    { id: 4, name: "привет" },
    { id: 8, name: "CaseSens" },
  ],
);

describe("user mentions", () => {
  it("renders a resolved mention and reports it", () => {
    const r = renderMarkdown("@**King Hamlet**", CTX);
    expect(r.html).toBe('<p><span class="user-mention" data-user-id="10">@King Hamlet</span></p>');
    expect([...r.mentionedUserIds]).toEqual([10]);
  });

  it("matches names case-insensitively but displays the real name", () => {
    expect(html("@**king hamlet**", CTX)).toBe(
      '<p><span class="user-mention" data-user-id="10">@King Hamlet</span></p>',
    );
  });

  it("supports @**|id** and @**Name|id**", () => {
    expect(html("@**|10**", CTX)).toBe(
      '<p><span class="user-mention" data-user-id="10">@King Hamlet</span></p>',
    );
    const r = renderMarkdown(
      "@**Mark Twin|21**, @**Mark Twin|22** and @**Cordelia, Lear's daughter**, hi.",
      CTX,
    );
    expect(r.html).toBe(
      '<p><span class="user-mention" data-user-id="21">@Mark Twin</span>, ' +
        '<span class="user-mention" data-user-id="22">@Mark Twin</span> and ' +
        '<span class="user-mention" data-user-id="11">@Cordelia, Lear\'s daughter</span>, hi.</p>',
    );
    expect(r.mentionedUserIds).toEqual(new Set([21, 22, 11]));
  });

  it("leaves ambiguous names without |id unresolved", () => {
    const r = renderMarkdown("@**Mark Twin**", CTX);
    expect(r.html).toBe("<p>@<strong>Mark Twin</strong></p>");
    expect(r.mentionedUserIds.size).toBe(0);
  });

  it("rejects @**name|id** when the name does not match that user", () => {
    const r = renderMarkdown("@**King Hamlet|10** and @**aaron|10**", CTX);
    expect(r.html).toBe(
      '<p><span class="user-mention" data-user-id="10">@King Hamlet</span> and @<strong>aaron|10</strong></p>',
    );
    expect(r.mentionedUserIds).toEqual(new Set([10]));
  });

  it("falls back to plain markdown for unknown users (Zulip: @<strong>…</strong>)", () => {
    const r = renderMarkdown("Hey @**Nonexistent User**", CTX);
    expect(r.html).toBe("<p>Hey @<strong>Nonexistent User</strong></p>");
    expect(r.mentionedUserIds.size).toBe(0);
    expect(html("@_**Invalid user** and @_**King Hamlet**", CTX)).toBe(
      '<p>@_<strong>Invalid user</strong> and <span class="user-mention silent" data-user-id="10">King Hamlet</span></p>',
    );
    expect(html("@_**|123456789**", CTX)).toBe("<p>@_<strong>|123456789</strong></p>");
  });

  it("renders mentions without context as plain markdown", () => {
    expect(html("@**King Hamlet**")).toBe("<p>@<strong>King Hamlet</strong></p>");
  });

  it("silent mentions do not notify", () => {
    const r = renderMarkdown("@_**King Hamlet**", CTX);
    expect(r.html).toBe(
      '<p><span class="user-mention silent" data-user-id="10">King Hamlet</span></p>',
    );
    expect(r.mentionedUserIds.size).toBe(0);
  });

  it("matches the §5 fixture user_mention_with_no_message_link", () => {
    expect(
      html("Hello @_**Zoe|7** see [this](http://zulip.testserver/#narrow/search/database).", {
        ...CTX,
        realmUrl: "http://zulip.testserver",
      }),
    ).toBe(
      '<p>Hello <span class="user-mention silent" data-user-id="7">Zoe</span> see <a href="#narrow/search/database">this</a>.</p>',
    );
  });

  it("requires whitespace or one of ' \" ( { [ / < before @", () => {
    for (const ch of ["(", "{", "[", "/", "<"]) {
      const escaped = ch === "<" ? "&lt;" : ch;
      expect(html(`${ch}@**King Hamlet**`, CTX)).toBe(
        `<p>${escaped}<span class="user-mention" data-user-id="10">@King Hamlet</span></p>`,
      );
    }
    for (const ch of [".", ",", ";", ":", "#"]) {
      expect(html(`${ch}@**King Hamlet**`, CTX)).toBe(`<p>${ch}@<strong>King Hamlet</strong></p>`);
    }
    expect(html("smush@**King Hamlet**smush", CTX)).toBe(
      "<p>smush@<strong>King Hamlet</strong>smush</p>",
    );
  });

  it("multiple mentions in one message", () => {
    const r = renderMarkdown(
      "@**King Hamlet** and @**Cordelia, Lear's daughter**, check this out",
      CTX,
    );
    expect(r.html).toBe(
      '<p><span class="user-mention" data-user-id="10">@King Hamlet</span> and ' +
        '<span class="user-mention" data-user-id="11">@Cordelia, Lear\'s daughter</span>, check this out</p>',
    );
    expect(r.mentionedUserIds).toEqual(new Set([10, 11]));
  });

  it("mentions in quotes are silent", () => {
    const r = renderMarkdown(
      "> @**King Hamlet** and @**Zoe**\n\n @**King Hamlet** and @**Cordelia, Lear's daughter**",
      CTX,
    );
    expect(r.html).toBe(
      '<blockquote>\n<p><span class="user-mention silent" data-user-id="10">King Hamlet</span> and ' +
        '<span class="user-mention silent" data-user-id="7">Zoe</span></p>\n</blockquote>\n' +
        '<p><span class="user-mention" data-user-id="10">@King Hamlet</span> and ' +
        '<span class="user-mention" data-user-id="11">@Cordelia, Lear\'s daughter</span></p>',
    );
    expect(r.mentionedUserIds).toEqual(new Set([10, 11]));
    const expected =
      '<blockquote>\n<p><span class="user-mention silent" data-user-id="10">King Hamlet</span></p>\n</blockquote>';
    for (const content of [
      "```quote\n@**King Hamlet**\n```",
      "> @**King Hamlet**",
      "```quote\n@_**King Hamlet**\n```",
    ]) {
      const q = renderMarkdown(content, CTX);
      expect(q.html).toBe(expected);
      expect(q.mentionedUserIds.size).toBe(0);
    }
  });

  it("mentions inside code are not mentions", () => {
    const r = renderMarkdown("`@**King Hamlet**`\n```\n@**King Hamlet**\n```", CTX);
    expect(r.html).toBe(
      '<p><code>@**King Hamlet**</code></p>\n<div class="codehilite"><pre><span></span><code>@**King Hamlet**\n</code></pre></div>',
    );
    expect(r.mentionedUserIds.size).toBe(0);
  });

  it("mentions inside bold text", () => {
    expect(html("**hi @**King Hamlet** there**", CTX)).toBe(
      '<p><strong>hi <span class="user-mention" data-user-id="10">@King Hamlet</span> there</strong></p>',
    );
  });
});

describe("wildcard mentions", () => {
  it.each(["all", "everyone", "channel", "stream"])("@**%s** is a channel wildcard", (w) => {
    const r = renderMarkdown(`@**${w}** test`, CTX);
    expect(r.html).toBe(
      `<p><span class="user-mention channel-wildcard-mention" data-user-id="*">@${w}</span> test</p>`,
    );
    expect(r.wildcardMention).toBe("channel");
    expect(r.mentionedUserIds.size).toBe(0);
  });

  it("@**topic** is a topic wildcard", () => {
    const r = renderMarkdown("@**topic** test", CTX);
    expect(r.html).toBe('<p><span class="topic-mention">@topic</span> test</p>');
    expect(r.wildcardMention).toBe("topic");
  });

  it("wildcards work without any context", () => {
    expect(renderMarkdown("@**all**").wildcardMention).toBe("channel");
  });

  it("channel wildcard wins over topic wildcard", () => {
    expect(renderMarkdown("@**topic** @**all**", CTX).wildcardMention).toBe("channel");
  });

  it("silent and quoted wildcards do not notify", () => {
    const r = renderMarkdown("@_**all**", CTX);
    expect(r.html).toBe(
      '<p><span class="user-mention channel-wildcard-mention silent" data-user-id="*">all</span></p>',
    );
    expect(r.wildcardMention).toBeNull();
    const t = renderMarkdown("> @**topic**", CTX);
    expect(t.html).toBe(
      '<blockquote>\n<p><span class="topic-mention silent">topic</span></p>\n</blockquote>',
    );
    expect(t.wildcardMention).toBeNull();
  });

  it("@all without stars is plain text", () => {
    const r = renderMarkdown("@all test @alleycat.com test", CTX);
    expect(r.html).toBe("<p>@all test @alleycat.com test</p>");
    expect(r.wildcardMention).toBeNull();
  });
});

describe("user group mentions", () => {
  it("renders and reports group mentions", () => {
    const r = renderMarkdown("@**King Hamlet** @*support*", CTX);
    expect(r.html).toBe(
      '<p><span class="user-mention" data-user-id="10">@King Hamlet</span> ' +
        '<span class="user-group-mention" data-user-group-id="5">@support</span></p>',
    );
    expect(r.mentionedGroupIds).toEqual(new Set([5]));
  });

  it("unknown groups fall back to emphasis", () => {
    const r = renderMarkdown("Hey @*Nonexistent group* and @*backend*", CTX);
    expect(r.html).toBe(
      '<p>Hey @<em>Nonexistent group</em> and <span class="user-group-mention" data-user-group-id="6">@backend</span></p>',
    );
    expect(r.mentionedGroupIds).toEqual(new Set([6]));
  });

  it("silent and quoted group mentions do not notify", () => {
    const r = renderMarkdown("We'll add you to @_*support* user group.", CTX);
    expect(r.html).toBe(
      '<p>We\'ll add you to <span class="user-group-mention silent" data-user-group-id="5">support</span> user group.</p>',
    );
    expect(r.mentionedGroupIds.size).toBe(0);
    const q = renderMarkdown("> @*backend*", CTX);
    expect(q.html).toBe(
      '<blockquote>\n<p><span class="user-group-mention silent" data-user-group-id="6">backend</span></p>\n</blockquote>',
    );
    expect(q.mentionedGroupIds.size).toBe(0);
  });
});

describe("channel and topic links", () => {
  it("links a channel", () => {
    const r = renderMarkdown("#**Denmark**", CTX);
    expect(r.html).toBe(
      '<p><a class="stream" data-stream-id="1" href="/#narrow/channel/1-Denmark">#Denmark</a></p>',
    );
    expect(r.hasLink).toBe(true);
  });

  it("unknown channels fall back to bold", () => {
    expect(html("#**Invalid** and #**Denmark**", CTX)).toBe(
      '<p>#<strong>Invalid</strong> and <a class="stream" data-stream-id="1" href="/#narrow/channel/1-Denmark">#Denmark</a></p>',
    );
  });

  it("is case-sensitive like Zulip", () => {
    expect(html("#**CaseSens**", CTX)).toBe(
      '<p><a class="stream" data-stream-id="8" href="/#narrow/channel/8-CaseSens">#CaseSens</a></p>',
    );
    expect(html("#**casesens**", CTX)).toBe("<p>#<strong>casesens</strong></p>");
  });

  it("encodes names like Zulip's hash_util_encode", () => {
    expect(html("#**привет**", CTX)).toBe(
      '<p><a class="stream" data-stream-id="4" href="/#narrow/channel/4-.D0.BF.D1.80.D0.B8.D0.B2.D0.B5.D1.82">#привет</a></p>',
    );
    expect(html("#**Stream #1234**", CTX)).toBe(
      '<p><a class="stream" data-stream-id="3" href="/#narrow/channel/3-Stream-.231234">#Stream #1234</a></p>',
    );
  });

  it("links topics", () => {
    expect(html("#**Denmark>some topic**", CTX)).toBe(
      '<p><a class="stream-topic" data-stream-id="1" href="/#narrow/channel/1-Denmark/topic/some.20topic">#Denmark &gt; some topic</a></p>',
    );
    expect(html("#**Denmark>#1234**", CTX)).toBe(
      '<p><a class="stream-topic" data-stream-id="1" href="/#narrow/channel/1-Denmark/topic/.231234">#Denmark &gt; #1234</a></p>',
    );
    expect(
      html("This has two links: #**Denmark>some topic** and #**Scotland>other topic**.", CTX),
    ).toBe(
      '<p>This has two links: <a class="stream-topic" data-stream-id="1" href="/#narrow/channel/1-Denmark/topic/some.20topic">#Denmark &gt; some topic</a>' +
        ' and <a class="stream-topic" data-stream-id="2" href="/#narrow/channel/2-Scotland/topic/other.20topic">#Scotland &gt; other topic</a>.</p>',
    );
  });

  it("links messages", () => {
    expect(html("#**Denmark>some topic@123**", CTX)).toBe(
      '<p><a class="message-link" href="/#narrow/channel/1-Denmark/topic/some.20topic/near/123">#Denmark &gt; some topic @ 💬</a></p>',
    );
  });
});

describe("extractMentionCandidates", () => {
  it("finds names, ids, groups and channels", () => {
    const c = extractMentionCandidates(
      "Hello @**King Hamlet**, @**|42** and @_**Cordelia, Lear's daughter**\n@**Foo van Barson|1234** @**all** @**topic** " +
        "@*support* #**Denmark** #**Scotland>weather** smush@**steve**smush `x`",
    );
    expect(new Set(c.userNames)).toEqual(
      new Set(["King Hamlet", "Cordelia, Lear's daughter", "Foo van Barson"]),
    );
    expect(new Set(c.userIds)).toEqual(new Set([42, 1234]));
    expect(c.groupNames).toEqual(["support"]);
    expect(new Set(c.channelNames)).toEqual(new Set(["Denmark", "Scotland>weather", "Scotland"]));
  });

  it("is empty for plain text", () => {
    expect(extractMentionCandidates("boring")).toEqual({
      userNames: [],
      userIds: [],
      groupNames: [],
      channelNames: [],
    });
  });
});

// ---------------------------------------------------------------------------
// Emoji
// ---------------------------------------------------------------------------

describe("emoji", () => {
  it("uses Zulip's names for common emoji", () => {
    expect(emojiCodeForName("smile")).toBe("1f642");
    expect(emojiCodeForName("+1")).toBe("1f44d");
    expect(emojiCodeForName("tada")).toBe("1f389");
    expect(emojiCodeForName("heart")).toBe("2764");
    expect(emojiCodeForName("octopus")).toBe("1f419");
    expect(emojiCodeForName("nope_not_an_emoji")).toBeUndefined();
  });

  it("renders realm emoji from context", () => {
    const ctx = {
      realmEmoji: new Map([["party_parrot", { sourceUrl: "/user_avatars/2/emoji/images/1.gif" }]]),
    };
    expect(html(":party_parrot:", ctx)).toBe(
      '<p><img alt=":party_parrot:" class="emoji" src="/user_avatars/2/emoji/images/1.gif" title="party parrot"></p>',
    );
  });

  it("does not render emoji inside code or link text", () => {
    expect(html("`:smile:` [:smile:](http://x.com)")).toBe(
      '<p><code>:smile:</code> <a href="http://x.com">:smile:</a></p>',
    );
  });

  it("leaves text-presentation symbols alone", () => {
    expect(html("a ↔ b © 2024 ⬆")).toBe("<p>a ↔ b © 2024 ⬆</p>");
  });
});

// ---------------------------------------------------------------------------
// Other blocks, flags
// ---------------------------------------------------------------------------

describe("blocks", () => {
  it("renders headings, blockquotes, lists, rules", () => {
    expect(html("## Sub\n> quoted\n\n1. a\n2. b\n\n---")).toBe(
      "<h2>Sub</h2>\n<blockquote>\n<p>quoted</p>\n</blockquote>\n<ol>\n<li>a</li>\n<li>b</li>\n</ol>\n<hr>",
    );
  });

  it("only knows '1.'-style ordered lists and needs text after a marker", () => {
    expect(html("1) one\n2) two")).toBe("<p>1) one<br>\n2) two</p>");
    expect(html("-")).toBe("<p>-</p>");
    expect(html("*")).toBe("<p>*</p>");
    expect(html("- a\n- b")).toBe("<ul>\n<li>a</li>\n<li>b</li>\n</ul>");
  });

  it("does not support setext headings", () => {
    expect(html("Title\n===")).toBe("<p>Title<br>\n===</p>");
  });

  it("keeps code fences of the other kind inside code", () => {
    expect(html("````\n```\ninner\n```\n````")).toBe(
      '<div class="codehilite"><pre><span></span><code>```\ninner\n```\n</code></pre></div>',
    );
  });

  it("closes a quote block at the first identical fence, like Zulip", () => {
    expect(html("```quote\nsee:\n```\ncode")).toBe(
      "<blockquote>\n<p>see:</p>\n</blockquote>\n<p>code</p>",
    );
  });

  it("nests code blocks inside quote blocks", () => {
    expect(html("````quote\nsee:\n```\ncode\n```\n````")).toBe(
      '<blockquote>\n<p>see:</p>\n<div class="codehilite"><pre><span></span><code>code\n</code></pre></div>\n</blockquote>',
    );
  });

  it("expands tabs in code", () => {
    expect(html("```\n\tindented\n```")).toBe(
      '<div class="codehilite"><pre><span></span><code>    indented\n</code></pre></div>',
    );
  });

  it("renders math blocks with Zulip's TeX-error fallback markup", () => {
    expect(html("```math\na^2 < b\n```")).toBe('<p><span class="tex-error">a^2 &lt; b</span></p>');
  });

  it("language names are canonicalised", () => {
    expect(html("```js\nx\n```")).toContain('data-code-language="JavaScript"');
    expect(html("```TypeScript\nx\n```")).toContain('data-code-language="TypeScript"');
  });
});

describe("message flags", () => {
  it("detects /me messages", () => {
    const r = renderMarkdown("/me is away");
    expect(r.isMeMessage).toBe(true);
    expect(r.html).toBe("<p>/me is away</p>");
    expect(renderMarkdown("hi /me").isMeMessage).toBe(false);
    expect(renderMarkdown("/meeting").isMeMessage).toBe(false);
  });

  it("reports links, images and attachments", () => {
    const plain = renderMarkdown("no links here");
    expect([plain.hasLink, plain.hasImage, plain.hasAttachment]).toEqual([false, false, false]);

    const link = renderMarkdown("see https://example.com");
    expect([link.hasLink, link.hasImage, link.hasAttachment]).toEqual([true, false, false]);

    const image = renderMarkdown("look https://example.com/cat.PNG");
    expect([image.hasLink, image.hasImage, image.hasAttachment]).toEqual([true, true, false]);

    const upload = renderMarkdown(
      "[report.pdf](/user_uploads/2/ab/cdef/report.pdf) and [pic.jpg](/user_uploads/2/cd/x/pic.jpg)",
    );
    expect(upload.html).toBe(
      '<p><a href="/user_uploads/2/ab/cdef/report.pdf">report.pdf</a> and <a href="/user_uploads/2/cd/x/pic.jpg">pic.jpg</a></p>',
    );
    expect([upload.hasLink, upload.hasImage, upload.hasAttachment]).toEqual([true, true, true]);
    expect(upload.potentialAttachmentPathIds).toEqual(["2/ab/cdef/report.pdf", "2/cd/x/pic.jpg"]);

    const realm = renderMarkdown("http://zulip.testserver/user_uploads/2/ab/file.txt", {
      realmUrl: "http://zulip.testserver/",
    });
    expect(realm.html).toBe(
      '<p><a href="user_uploads/2/ab/file.txt">http://zulip.testserver/user_uploads/2/ab/file.txt</a></p>',
    );
    expect(realm.hasAttachment).toBe(true);
    expect(realm.potentialAttachmentPathIds).toEqual(["2/ab/file.txt"]);

    const quoted = renderMarkdown("> https://example.com/cat.png");
    expect([quoted.hasLink, quoted.hasImage]).toEqual([true, false]);
  });
});

describe("robustness", () => {
  it("renders pathological input in reasonable time", () => {
    const inputs = [
      "`".repeat(5000) + "x",
      "*a ".repeat(3000),
      "**a ".repeat(3000),
      "~~a ".repeat(3000),
      "@**x ".repeat(2000),
      "[".repeat(3000) + "x" + "](http://a.com)".repeat(10),
      "http://a.com/" + "(".repeat(2000),
      "a.".repeat(3000) + "com",
      "> ".repeat(500) + "deep",
      ":a".repeat(4000),
    ];
    for (const input of inputs) {
      const start = performance.now();
      renderMarkdown(input, CTX);
      expect(performance.now() - start, input.slice(0, 20)).toBeLessThan(2000);
    }
  });

  it("renders a typical message fast", () => {
    const msg =
      "Hi @**King Hamlet**, see #**Denmark>some topic** and https://example.com/x :smile:\n\n* one\n* **two**\n\n```py\nprint(1)\n```";
    renderMarkdown(msg, CTX);
    const start = performance.now();
    for (let i = 0; i < 200; i++) renderMarkdown(msg, CTX);
    expect((performance.now() - start) / 200).toBeLessThan(5);
  });
});
