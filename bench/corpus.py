"""Synthetic session corpus: Codex CLI rollouts and Claude Code transcripts, laid out as real homes.

    <root>/codex/sessions/YYYY/MM/DD/rollout-<local-ts>-<uuid>.jsonl
    <root>/claude/projects/<encoded-cwd>/<uuid>.jsonl

Records copy the *shapes* of the real samples in `../shared/fixtures/sessions` (Codex 0.125
envelope files; Claude Code 2.1.121 transcripts), never their content. Text is English prose with
code identifiers plus some Chinese; tool outputs range from a few bytes to tens of KB; a few turns
carry base64 images of a few hundred KB; some turns commit with git (`[main abc1234] subject`).

Everything is deterministic by seed (no clock, no os.urandom), and fast: text is composed from
pools built once per seed, long payloads are slices of pre-built blobs, JSON is written by orjson.

    python bench/corpus.py OUT_DIR [--seed 1] (--mib 50 | --turns 250000) [--profile full|lean]
"""

from __future__ import annotations

import argparse
import base64
import random
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

_REPO = Path(__file__).resolve().parents[1]
# the real data no one here wrote: ../shared beside a clone, or ../../shared beside a folder of
# worktrees (as tests/support.py)
SHARED_FIXTURES = next(
    (
        up / "shared" / "fixtures"
        for up in (_REPO.parent, _REPO.parent.parent)
        if (up / "shared").exists()
    ),
    _REPO.parent / "shared" / "fixtures",
)

GENERATOR_VERSION = 1
Profile = Literal["full", "lean"]
FEATURE_PHRASE = "增量同步"  # in the first prompt of each provider's first session

BASE_EPOCH_MS = 1_772_323_200_000  # 2026-03-01T00:00:00Z
CODEX_VERSION = "0.125.0"
CLAUDE_VERSION = "2.1.121"
CODEX_MODEL = "gpt-5.5"
CLAUDE_MODEL = "claude-opus-4-7"

# --------------------------------------------------------------------------------------------
# vocabulary


def _words(text: str) -> list[str]:
    return text.split()


_WORDS = _words(
    "the a an of to in for on with by from into over after before when while because so then "
    "and or but not only also still already just again now later first next last each every "
    "this that these those it its we our you your they their there here which what why how "
    "is are was were be been being has have had do does did can could should would will may "
    "might must need needs want keep keeps make makes made use uses used run runs ran add adds "
    "added remove removed fix fixed fixes change changed update updated check checked read "
    "write wrote move moved rename renamed split merge merged return returns call calls called "
    "test tests failing passing passes fails failed broken works working error errors warning "
    "timeout retry retries cache cached stale fresh lock locked file files path paths directory "
    "module modules function functions class classes method methods field fields value values "
    "config settings option options flag flags default defaults schema migration migrations "
    "table tables index indexes query queries row rows column columns record records batch "
    "request response handler handlers client server endpoint route routes token tokens user "
    "users session sessions commit commits branch branches repository worktree diff patch build "
    "compile lint type types parser parse output input stream buffer memory disk network socket "
    "thread process worker workers queue job jobs event events state status result results "
    "small large empty missing duplicate invalid unexpected slow fast safe unsafe correct wrong "
    "simple clear careful minimal explicit implicit async sync incremental partial complete "
    "benchmark profile latency throughput regression edge case cases behaviour contract "
    "interface adapter provider backend frontend component layout style page view model "
    "payload header footer line lines byte bytes offset size limit window count total"
)

_VERBS = _words(
    "parse load save build resolve flush encode decode fetch render apply validate normalize "
    "compute merge split read write open close scan index search sync format collect emit "
    "register update delete create handle dispatch"
)
_NOUNS = _words(
    "session token index cache config worker queue record payload header offset turn commit "
    "branch path file line event state result request response handler client server route "
    "schema table query column batch buffer stream socket thread job user account invoice "
    "order cart price event ticket chart metric report layout widget modal form field"
)
_PACKAGES = _words(
    "core sessions api billing auth storage web cli models utils services workers ui "
    "components hooks lib server client"
)
_TYPES = _words("str int bool bytes float Path Any None dict list Record Session Config")

_CHINESE_PHRASES = _words(
    "修复登录超时问题 数据库迁移 缓存失效 单元测试失败 重构解析器 提交代码 合并分支 "
    "性能优化 内存泄漏 配置文件 接口文档 错误处理 日志输出 用户权限 并发写入 索引重建 "
    "搜索结果 会话记录 增量同步 文件路径 回归测试 部署脚本 依赖升级 类型检查 代码审查 "
    "需求变更 边界情况 异常退出 网络请求 前端页面 后端服务 数据模型 查询语句 事务提交 "
    "时间窗口 字符编码 中文分词 全文检索 命令行工具 环境变量 版本兼容 安全漏洞 权限校验 "
    "构建失败 测试覆盖率 接口超时 重试机制 消息队列 定时任务 负载均衡 数据一致性 "
    "请帮我检查一下 这个函数有问题 看起来没问题 我们需要 先运行测试 然后提交"
)

_FILLER_CJK = _words("的 了 和 在 是 把 被 对 也 都 还 就")


def _camel(parts: list[str]) -> str:
    return parts[0] + "".join(p.capitalize() for p in parts[1:])


def _pascal(parts: list[str]) -> str:
    return "".join(p.capitalize() for p in parts)


@dataclass
class _Pools:
    """Text pieces built once per seed; every record is composed from these."""

    identifiers: list[str]
    paths: list[str]
    sentences: list[str]
    chinese: list[str]
    code_files: list[str]  # whole source files (1..48 KB)
    logs: list[str]  # long command outputs (test runs, builds)
    images: list[str]  # base64 payloads (a few hundred KB)
    signature: str  # base64 text for thinking signatures / encrypted reasoning


def _build_pools(rng: random.Random) -> _Pools:
    identifiers: list[str] = []
    for _ in range(6000):
        verb, noun, noun2 = rng.choice(_VERBS), rng.choice(_NOUNS), rng.choice(_NOUNS)
        form = rng.randrange(6)
        if form == 0:
            identifiers.append(f"{verb}_{noun}")
        elif form == 1:
            identifiers.append(_camel([verb, noun, noun2]))
        elif form == 2:
            identifiers.append(_pascal([noun, noun2]))
        elif form == 3:
            identifiers.append(f"{rng.choice(_PACKAGES)}.{verb}_{noun}")
        elif form == 4:
            identifiers.append(f"{noun.upper()}_{noun2.upper()}_{rng.choice(('MAX', 'MS', 'KEY'))}")
        else:
            identifiers.append(f"{verb}-{noun}-{rng.randrange(2, 99)}")
    paths = []
    for _ in range(1500):
        ext = rng.choice((".py", ".py", ".ts", ".tsx", ".md", ".toml", ".json", ".rs"))
        depth = rng.randrange(1, 4)
        folders = "/".join(rng.choice(_PACKAGES) for _ in range(depth))
        paths.append(f"src/{folders}/{rng.choice(_NOUNS)}_{rng.choice(_NOUNS)}{ext}")
    chinese = []
    for _ in range(3000):
        parts = [rng.choice(_CHINESE_PHRASES) for _ in range(rng.randrange(2, 5))]
        joined = "，".join(
            p + (rng.choice(_FILLER_CJK) if rng.random() < 0.3 else "") for p in parts
        )
        chinese.append(joined + "。")
    sentences = []
    for _ in range(20000):
        words = [rng.choice(_WORDS) for _ in range(rng.randrange(6, 22))]
        for _ in range(rng.randrange(0, 3)):
            words.insert(rng.randrange(len(words)), f"`{rng.choice(identifiers)}`")
        if rng.random() < 0.15:
            words.insert(rng.randrange(len(words)), rng.choice(paths))
        sentence = " ".join(words)
        sentences.append(sentence[0].upper() + sentence[1:] + rng.choice((".", ".", ".", "?", ":")))
    code_files = [
        _code_file(rng, identifiers, sentences, rng.randrange(1_000, 48_000)) for _ in range(160)
    ]
    logs = [_log_blob(rng, identifiers, paths, rng.randrange(8_000, 64_000)) for _ in range(48)]
    images = [
        base64.b64encode(b"\x89PNG\r\n\x1a\n" + rng.randbytes(320_000)).decode() for _ in range(3)
    ]
    signature = base64.b64encode(rng.randbytes(6_000)).decode()
    return _Pools(identifiers, paths, sentences, chinese, code_files, logs, images, signature)


def _code_file(rng: random.Random, idents: list[str], sentences: list[str], size: int) -> str:
    lines: list[str] = [
        f'"""{rng.choice(sentences)}"""',
        "",
        "from __future__ import annotations",
        "",
    ]
    total = 0
    while total < size:
        name = rng.choice(idents).replace(".", "_").replace("-", "_").lower()
        kind = rng.randrange(4)
        if kind == 0:
            block = [
                f"class {_pascal(name.split('_')[:3])}:",
                f'    """{rng.choice(sentences)}"""',
                "",
                f"    def __init__(self, {rng.choice(_NOUNS)}: {rng.choice(_TYPES)}) -> None:",
                f"        self.{rng.choice(_NOUNS)} = {rng.choice(_NOUNS)}",
                "",
            ]
        elif kind == 1:
            arg = rng.choice(_NOUNS)
            block = [
                f"def {name}({arg}: {rng.choice(_TYPES)}) -> {rng.choice(_TYPES)}:",
                f"    # {rng.choice(sentences)}",
                f"    if not {arg}:",
                f'        raise ValueError("{rng.choice(sentences)[:60]}")',
                f"    return {rng.choice(idents).replace('-', '_')}({arg})",
                "",
            ]
        elif kind == 2:
            block = [
                f"    {rng.choice(_NOUNS)} = {rng.choice(_NOUNS)}.{name}({rng.randrange(1000)})",
                f"    for item in {rng.choice(_NOUNS)}s:",
                f"        total += item.{rng.choice(_NOUNS)}_{rng.choice(_NOUNS)}",
                "",
            ]
        else:
            block = [
                f"{name.upper()} = {rng.randrange(1, 1 << 16)}  # {rng.choice(sentences)[:70]}"
            ]
        lines.extend(block)
        total += sum(len(b) + 1 for b in block)
    return "\n".join(lines) + "\n"


def _log_blob(rng: random.Random, idents: list[str], paths: list[str], size: int) -> str:
    lines: list[str] = []
    total = 0
    while total < size:
        kind = rng.randrange(5)
        if kind < 3:
            test = rng.choice(idents).replace(".", "_").replace("-", "_").lower()
            status = rng.choice(("PASSED", "PASSED", "PASSED", "FAILED", "SKIPPED"))
            module = f"tests/{rng.choice(_PACKAGES)}/test_{rng.choice(_NOUNS)}.py"
            line = f"{module}::test_{test} {status} [{rng.randrange(100):3d}%]"
        elif kind == 3:
            where = f"line {rng.randrange(1, 900)}, in {rng.choice(idents)}"
            line = f'  File "{rng.choice(paths)}", {where}'
        else:
            where = f"{rng.choice(paths)}:{rng.randrange(1, 900)}:{rng.randrange(1, 80)}"
            line = f"{where}: warning: {rng.choice(_WORDS)} {rng.choice(idents)} is unused"
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# small helpers


def _iso(ms: int) -> str:
    seconds, millis = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def _uuid4(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _uuid7(rng: random.Random, ms: int) -> str:
    value = (ms & ((1 << 48) - 1)) << 80 | rng.getrandbits(80)
    value = (value & ~(0xF << 76)) | (0x7 << 76)
    value = (value & ~(0x3 << 62)) | (0x2 << 62)
    return str(uuid.UUID(int=value))


def _b62(rng: random.Random, n: int) -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(rng.choices(alphabet, k=n))


def _slice(rng: random.Random, blob: str, size: int) -> str:
    if size >= len(blob):
        return blob
    start = rng.randrange(0, len(blob) - size)
    newline = blob.find("\n", start)
    start = newline + 1 if 0 <= newline < start + 200 else start
    return blob[start : start + size]


def encode_cwd(cwd: str) -> str:
    """Claude Code's project folder name: every non-alphanumeric character becomes '-'."""
    return "".join(c if c.isalnum() else "-" for c in cwd)


# --------------------------------------------------------------------------------------------
# content of one turn (provider independent)


@dataclass
class _Tool:
    kind: Literal["shell", "read", "edit", "write", "commit", "image"]
    command: str = ""
    path: str = ""
    output: str = ""
    exit_code: int = 0
    old: str = ""
    new: str = ""
    content: str = ""
    image: str = ""


@dataclass
class _Turn:
    prompt: str
    prompt_image: str | None
    steps: list[tuple[str, _Tool | None]]  # (commentary text, tool) pairs
    final: str
    token: str  # a word unique to this turn, for searches


class _Writer:
    """Composes turns from the pools. One per corpus; consumes one RNG stream."""

    def __init__(self, seed: int, profile: Profile) -> None:
        self.rng = random.Random(seed)
        self.pools = _build_pools(random.Random(f"pools-{seed}"))
        self.profile = profile
        self.turn_counter = 0

    # -- text ----------------------------------------------------------------------------

    def prose(self, sentences: int) -> str:
        rng, pools = self.rng, self.pools
        n = len(pools.sentences)
        out = []
        for _ in range(sentences):
            if rng.random() < 0.12:
                out.append(pools.chinese[rng.randrange(len(pools.chinese))])
            else:
                out.append(pools.sentences[int(n * rng.random() ** 1.5)])
        return " ".join(out)

    def signature(self) -> str:
        """Opaque base64 (thinking signatures, encrypted reasoning)."""
        size = (
            self.rng.randrange(120, 600)
            if self.profile == "lean"
            else self.rng.randrange(600, 2_400)
        )
        return _slice(self.rng, self.pools.signature, size)

    def ident(self) -> str:
        pools = self.pools
        return pools.identifiers[int(len(pools.identifiers) * self.rng.random() ** 2)]

    def path(self) -> str:
        return self.pools.paths[int(len(self.pools.paths) * self.rng.random() ** 2)]

    # -- turn ----------------------------------------------------------------------------

    def turn(self, feature: int | None = None) -> _Turn:
        """One turn. `feature` 0..3 forces a rare shape (0: image + Chinese prompt, 1: git
        commit, 2: image tool result, 3: failing command), so even a tiny corpus has each."""
        rng = self.rng
        lean = self.profile == "lean"
        self.turn_counter += 1
        token = f"zq{self.turn_counter:x}k"
        prompt = self.prose(rng.randrange(1, 5)) + f" ({token})"
        if rng.random() < 0.2:
            prompt = self.pools.chinese[rng.randrange(len(self.pools.chinese))] + " " + prompt
        if feature == 0:
            prompt = f"{FEATURE_PHRASE}：{prompt}"
        image = None
        if feature == 0 or (not lean and rng.random() < 0.01):
            blob = rng.choice(self.pools.images)
            image = blob[: (rng.randrange(150_000, 400_000) // 4) * 4]
        steps: list[tuple[str, _Tool | None]] = []
        n_tools = rng.choice((0, 1, 1, 2)) if lean else rng.choice((0, 1, 2, 3, 4, 5, 6, 8, 12))
        for _ in range(n_tools):
            text = self.prose(rng.randrange(1, 3)) if rng.random() < 0.5 else ""
            steps.append((text, self.tool()))
        if feature == 1 or (not lean and rng.random() < 0.06):
            steps.append(("", self.commit_tool()))
        if feature == 3:
            steps.append(
                (
                    "",
                    _Tool(
                        "shell",
                        command="pytest -q tests",
                        exit_code=1,
                        output="F.\nFAILED tests/test_sync.py::test_append\n",
                    ),
                )
            )
        if feature == 2 or (not lean and rng.random() < 0.008):
            steps.append(
                (
                    "",
                    _Tool(
                        "image",
                        path=self.path().rsplit(".", 1)[0] + ".png",
                        image=rng.choice(self.pools.images)[:200_000],
                    ),
                )
            )
        final = self.prose(rng.randrange(1, 4) if lean else rng.randrange(2, 9))
        return _Turn(prompt, image, steps, final, token)

    def tool(self) -> _Tool:
        rng = self.rng
        lean = self.profile == "lean"
        roll = rng.random()
        if roll < 0.5:
            return self.shell_tool(lean)
        if roll < 0.75:
            path = self.path()
            source = rng.choice(self.pools.code_files)
            size = (
                rng.randrange(200, 1_200)
                if lean
                else rng.choice((1_500, 4_000, 9_000, 20_000, 48_000))
            )
            return _Tool("read", path=path, content=_slice(rng, source, size))
        if roll < 0.93:
            old = _slice(rng, rng.choice(self.pools.code_files), rng.randrange(80, 600))
            new = old.replace(rng.choice(_NOUNS), rng.choice(_NOUNS)) + f"\n# {self.prose(1)}\n"
            return _Tool("edit", path=self.path(), old=old, new=new)
        size = rng.randrange(300, 1_000) if lean else rng.randrange(400, 12_000)
        content = _slice(rng, rng.choice(self.pools.code_files), size)
        return _Tool("write", path=self.path(), content=content)

    def shell_tool(self, lean: bool) -> _Tool:
        rng = self.rng
        roll = rng.random()
        if roll < 0.25:
            command = f"pytest -q tests/{rng.choice(_PACKAGES)} -k {self.ident().replace('.', '_')}"
            size = rng.randrange(100, 900) if lean else rng.choice((900, 3_000, 12_000, 40_000))
            output = _slice(rng, rng.choice(self.pools.logs), size)
            failed = rng.random() < 0.2
            output += (
                "\nFAILED " if failed else "\n"
            ) + f"{rng.randrange(1, 400)} passed in {rng.random() * 9:.2f}s\n"
            return _Tool("shell", command=command, output=output, exit_code=1 if failed else 0)
        if roll < 0.5:
            ident = self.ident()
            command = f'rg -n "{ident}" src tests'
            lines = [
                f"{self.path()}:{rng.randrange(1, 800)}:    {self.prose(1)[:90]}"
                for _ in range(rng.randrange(0, 6 if lean else 40))
            ]
            return _Tool(
                "shell",
                command=command,
                output="\n".join(lines) + ("\n" if lines else ""),
                exit_code=0 if lines else 1,
            )
        if roll < 0.7:
            command = "git status --short && git diff --stat"
            lines = [f" M {self.path()}" for _ in range(rng.randrange(1, 8))]
            return _Tool("shell", command=command, output="\n".join(lines) + "\n")
        if roll < 0.85:
            command = f"ls -la {self.path().rsplit('/', 1)[0]}"
            lines = [
                f"-rw-r--r--  1 dev dev {rng.randrange(100, 90_000):6d} Mar  "
                f"{rng.randrange(1, 29):2d} 10:{rng.randrange(60):02d} {p.rsplit('/', 1)[1]}"
                for p in (self.path() for _ in range(rng.randrange(2, 14)))
            ]
            return _Tool("shell", command=command, output="\n".join(lines) + "\n")
        command = f"npm run build -- --filter {rng.choice(_PACKAGES)}"
        size = rng.randrange(100, 900) if lean else rng.choice((2_000, 8_000, 30_000))
        failed = rng.random() < 0.25
        output = _slice(rng, rng.choice(self.pools.logs), size)
        if failed:
            output += (
                f"\nerror TS2339: Property '{self.ident()}' does not exist on type "
                f"'{rng.choice(_TYPES)}'.\n"
            )
        return _Tool("shell", command=command, output=output, exit_code=2 if failed else 0)

    def commit_tool(self) -> _Tool:
        rng = self.rng
        subject = self.prose(1)[:72].rstrip(" .:?")
        if rng.random() < 0.15:
            subject = self.pools.chinese[rng.randrange(len(self.pools.chinese))][:30]
        short = f"{rng.getrandbits(28):07x}"
        files = rng.randrange(1, 6)
        output = (
            f"[main {short}] {subject}\n {files} file{'s' if files > 1 else ''} changed, "
            f"{rng.randrange(1, 300)} insertions(+), {rng.randrange(0, 120)} deletions(-)\n"
        )
        command = f"git add -A && git commit -m {orjson.dumps(subject).decode()}"
        return _Tool("commit", command=command, output=output)


# --------------------------------------------------------------------------------------------
# providers: records of one session


@dataclass
class _SessionPlan:
    provider: Literal["codex", "claude"]
    session_id: str
    cwd: str
    branch: str
    start_ms: int
    turns: list[_Turn] = field(default_factory=list)


def _dumps(record: dict[str, Any]) -> bytes:
    return orjson.dumps(record)


class _Clock:
    def __init__(self, rng: random.Random, start_ms: int) -> None:
        self.rng = rng
        self.ms = start_ms

    def tick(self, lo: int = 5, hi: int = 4_000) -> str:
        self.ms += self.rng.randrange(lo, hi)
        return _iso(self.ms)


def codex_records(plan: _SessionPlan, writer: _Writer) -> Iterator[bytes]:
    """A Codex 0.125 envelope rollout (research/session-formats.md §2)."""
    rng = writer.rng
    clock = _Clock(rng, plan.start_ms)
    first_at = clock.tick(0, 50)
    yield _dumps(
        {
            "timestamp": first_at,
            "type": "session_meta",
            "payload": {
                "id": plan.session_id,
                "timestamp": _iso(plan.start_ms - 40_000),
                "cwd": plan.cwd,
                "originator": "codex-tui",
                "cli_version": CODEX_VERSION,
                "source": "cli",
                "model_provider": "openai",
                "base_instructions": {
                    "text": "You are Codex, a coding agent. "
                    + writer.prose(30 if writer.profile == "full" else 4)
                },
                "git": {
                    "commit_hash": f"{rng.getrandbits(160):040x}",
                    "branch": plan.branch,
                    "repository_url": f"git@github.com:example/{plan.cwd.rsplit('/', 1)[-1]}.git",
                },
            },
        }
    )
    total_tokens = 0
    for number, turn in enumerate(plan.turns):
        turn_id = _uuid7(rng, clock.ms)
        started = clock.ms
        yield _dumps(
            {
                "timestamp": clock.tick(),
                "type": "event_msg",
                "payload": {
                    "type": "task_started",
                    "turn_id": turn_id,
                    "started_at": clock.ms // 1000,
                    "model_context_window": 258400,
                    "collaboration_mode_kind": "default",
                },
            }
        )
        if number == 0:
            yield _dumps(
                {
                    "timestamp": clock.tick(1, 3),
                    "type": "response_item",
                    "payload": {
                        "type": "message",
                        "role": "developer",
                        "content": [
                            {
                                "type": "input_text",
                                "text": "<permissions instructions>\nFilesystem "
                                "sandboxing defines which files can be read or written. "
                                + writer.prose(4),
                            }
                        ],
                    },
                }
            )
            yield _dumps(
                {
                    "timestamp": clock.tick(1, 3),
                    "type": "response_item",
                    "payload": {
                        "type": "message",
                        "role": "user",
                        "content": [
                            {
                                "type": "input_text",
                                "text": f"<environment_context>\n  <cwd>{plan.cwd}</cwd>\n"
                                "  <shell>bash</shell>\n"
                                "  <current_date>2026-03-01</current_date>\n"
                                "  <timezone>UTC</timezone>\n"
                                "</environment_context>",
                            }
                        ],
                    },
                }
            )
        yield _dumps(
            {
                "timestamp": clock.tick(1, 3),
                "type": "turn_context",
                "payload": {
                    "turn_id": turn_id,
                    "cwd": plan.cwd,
                    "current_date": first_at[:10],
                    "timezone": "UTC",
                    "approval_policy": "on-request",
                    "sandbox_policy": {
                        "type": "workspace-write",
                        "writable_roots": [],
                        "network_access": False,
                        "exclude_tmpdir_env_var": False,
                        "exclude_slash_tmp": False,
                    },
                    "model": CODEX_MODEL,
                    "personality": "pragmatic",
                    "collaboration_mode": {
                        "mode": "default",
                        "settings": {
                            "model": CODEX_MODEL,
                            "reasoning_effort": None,
                            "developer_instructions": "# Collaboration Mode: Default\n",
                        },
                    },
                    "realtime_active": False,
                    "summary": "none",
                    "truncation_policy": {"mode": "tokens", "limit": 10000},
                },
            }
        )
        yield _dumps(
            {
                "timestamp": clock.tick(1, 3),
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": turn.prompt}],
                },
            }
        )
        images = []
        if turn.prompt_image:
            images = [f"data:image/png;base64,{turn.prompt_image}"]
        yield _dumps(
            {
                "timestamp": clock.tick(1, 3),
                "type": "event_msg",
                "payload": {
                    "type": "user_message",
                    "message": turn.prompt,
                    "images": images,
                    "local_images": [],
                    "text_elements": [],
                },
            }
        )
        for text, tool in turn.steps:
            total_tokens += rng.randrange(500, 9_000)
            yield _codex_token_count(clock, total_tokens)
            yield _dumps(
                {
                    "timestamp": clock.tick(),
                    "type": "response_item",
                    "payload": {
                        "type": "reasoning",
                        "summary": [],
                        "content": None,
                        "encrypted_content": "gAAAAAB" + writer.signature(),
                    },
                }
            )
            if text:
                yield from _codex_assistant(clock, text, "commentary")
            if tool is not None:
                yield from _codex_tool(clock, writer, plan, turn_id, tool)
        yield from _codex_assistant(clock, turn.final, "final_answer")
        total_tokens += rng.randrange(500, 4_000)
        yield _codex_token_count(clock, total_tokens)
        yield _dumps(
            {
                "timestamp": clock.tick(),
                "type": "event_msg",
                "payload": {
                    "type": "task_complete",
                    "turn_id": turn_id,
                    "last_agent_message": turn.final,
                    "completed_at": clock.ms // 1000,
                    "duration_ms": clock.ms - started,
                    "time_to_first_token_ms": rng.randrange(400, 5_000),
                },
            }
        )
        clock.tick(20_000, 600_000)


def _codex_token_count(clock: _Clock, total: int) -> bytes:
    return _dumps(
        {
            "timestamp": clock.tick(1, 50),
            "type": "event_msg",
            "payload": {
                "type": "token_count",
                "info": {
                    "total_token_usage": {
                        "input_tokens": total,
                        "cached_input_tokens": total // 2,
                        "output_tokens": total // 20,
                        "reasoning_output_tokens": 0,
                        "total_tokens": total + total // 20,
                    },
                    "last_token_usage": {
                        "input_tokens": 1200,
                        "cached_input_tokens": 800,
                        "output_tokens": 90,
                        "reasoning_output_tokens": 0,
                        "total_tokens": 1290,
                    },
                    "model_context_window": 258400,
                },
                "rate_limits": {
                    "limit_id": "codex",
                    "limit_name": None,
                    "primary": {
                        "used_percent": 1.0,
                        "window_minutes": 300,
                        "resets_at": 1777249218,
                    },
                    "secondary": {
                        "used_percent": 40.0,
                        "window_minutes": 10080,
                        "resets_at": 1777743490,
                    },
                    "credits": None,
                    "plan_type": "plus",
                    "rate_limit_reached_type": None,
                },
            },
        }
    )


def _codex_assistant(clock: _Clock, text: str, phase: str) -> Iterator[bytes]:
    at = clock.tick()
    yield _dumps(
        {
            "timestamp": at,
            "type": "event_msg",
            "payload": {
                "type": "agent_message",
                "message": text,
                "phase": phase,
                "memory_citation": None,
            },
        }
    )
    yield _dumps(
        {
            "timestamp": at,
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
                "phase": phase,
            },
        }
    )


def _codex_tool(
    clock: _Clock, writer: _Writer, plan: _SessionPlan, turn_id: str, tool: _Tool
) -> Iterator[bytes]:
    rng = writer.rng
    call_id = "call_" + _b62(rng, 24)
    if tool.kind in ("shell", "commit"):
        yield from _codex_shell(
            clock, rng, plan, turn_id, call_id, tool.command, tool.output, tool.exit_code
        )
    elif tool.kind == "read":
        numbered = tool.content  # Codex reads files with the shell
        yield from _codex_shell(
            clock, rng, plan, turn_id, call_id, f"sed -n '1,400p' {tool.path}", numbered, 0
        )
    elif tool.kind in ("edit", "write"):
        if tool.kind == "edit":
            body = "\n".join(
                [f"*** Update File: {tool.path}", "@@"]
                + [f"-{line}" for line in tool.old.splitlines()]
                + [f"+{line}" for line in tool.new.splitlines()]
            )
            change = {
                "type": "update",
                "unified_diff": "@@ -1,4 +1,5 @@\n" + body,
                "move_path": None,
            }
            letter = "M"
        else:
            body = "\n".join(
                [f"*** Add File: {tool.path}"] + [f"+{line}" for line in tool.content.splitlines()]
            )
            change = {"type": "add", "content": tool.content}
            letter = "A"
        patch = f"*** Begin Patch\n{body}\n*** End Patch\n"
        yield _dumps(
            {
                "timestamp": clock.tick(),
                "type": "response_item",
                "payload": {
                    "type": "custom_tool_call",
                    "status": "completed",
                    "call_id": call_id,
                    "name": "apply_patch",
                    "input": patch,
                },
            }
        )
        stdout = f"Success. Updated the following files:\n{letter} {tool.path}\n"
        yield _dumps(
            {
                "timestamp": clock.tick(50, 400),
                "type": "event_msg",
                "payload": {
                    "type": "patch_apply_end",
                    "call_id": call_id,
                    "turn_id": turn_id,
                    "stdout": stdout,
                    "stderr": "",
                    "success": True,
                    "changes": {f"{plan.cwd}/{tool.path}": change},
                },
            }
        )
        output = orjson.dumps(
            {"output": stdout, "metadata": {"exit_code": 0, "duration_seconds": 0.1}}
        ).decode()
        yield _dumps(
            {
                "timestamp": clock.tick(1, 5),
                "type": "response_item",
                "payload": {
                    "type": "custom_tool_call_output",
                    "call_id": call_id,
                    "output": output,
                },
            }
        )
    elif tool.kind == "image":
        path = f"{plan.cwd}/{tool.path}"
        yield _dumps(
            {
                "timestamp": clock.tick(),
                "type": "response_item",
                "payload": {
                    "type": "function_call",
                    "name": "view_image",
                    "arguments": orjson.dumps({"path": path, "detail": "original"}).decode(),
                    "call_id": call_id,
                },
            }
        )
        yield _dumps(
            {
                "timestamp": clock.tick(1, 10),
                "type": "event_msg",
                "payload": {"type": "view_image_tool_call", "call_id": call_id, "path": path},
            }
        )
        yield _dumps(
            {
                "timestamp": clock.tick(10, 100),
                "type": "response_item",
                "payload": {
                    "type": "function_call_output",
                    "call_id": call_id,
                    "output": [
                        {
                            "type": "input_image",
                            "image_url": f"data:image/png;base64,{tool.image}",
                            "detail": "original",
                        }
                    ],
                },
            }
        )


def _codex_shell(
    clock: _Clock,
    rng: random.Random,
    plan: _SessionPlan,
    turn_id: str,
    call_id: str,
    command: str,
    output: str,
    exit_code: int,
) -> Iterator[bytes]:
    yield _dumps(
        {
            "timestamp": clock.tick(),
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "shell_command",
                "arguments": orjson.dumps(
                    {"command": command, "workdir": plan.cwd, "timeout_ms": 120000}
                ).decode(),
                "call_id": call_id,
            },
        }
    )
    wall = rng.random() * 8
    yield _dumps(
        {
            "timestamp": clock.tick(100, 9_000),
            "type": "event_msg",
            "payload": {
                "type": "exec_command_end",
                "call_id": call_id,
                "turn_id": turn_id,
                "command": ["/bin/bash", "-lc", command],
                "cwd": plan.cwd,
                "parsed_cmd": [{"type": "unknown", "cmd": command}],
                "source": "agent",
                "stdout": "",
                "stderr": "",
                "aggregated_output": output,
                "exit_code": exit_code,
                "duration": {"secs": int(wall), "nanos": int((wall % 1) * 1e9)},
                "formatted_output": "",
                "status": "completed" if exit_code == 0 else "failed",
            },
        }
    )
    yield _dumps(
        {
            "timestamp": clock.tick(1, 30),
            "type": "response_item",
            "payload": {
                "type": "function_call_output",
                "call_id": call_id,
                "output": f"Exit code: {exit_code}\nWall time: {wall:.1f} seconds\n"
                f"Output:\n{output}",
            },
        }
    )


def claude_records(plan: _SessionPlan, writer: _Writer) -> Iterator[bytes]:
    """A Claude Code 2.1.121 transcript (research/session-formats.md §1)."""
    rng = writer.rng
    clock = _Clock(rng, plan.start_ms)
    base = {
        "userType": "external",
        "entrypoint": "cli",
        "cwd": plan.cwd,
        "sessionId": plan.session_id,
        "version": CLAUDE_VERSION,
        "gitBranch": plan.branch,
    }
    parent: str | None = None

    def envelope(kind: str, at: str, **fields: Any) -> bytes:
        nonlocal parent
        record_uuid = _uuid4(rng)
        record = {
            "parentUuid": parent,
            "isSidechain": False,
            **fields,
            "type": kind,
            "uuid": record_uuid,
            "timestamp": at,
            **base,
        }
        parent = record_uuid
        return _dumps(record)

    def usage() -> dict[str, Any]:
        created = rng.randrange(0, 12_000)
        return {
            "input_tokens": rng.randrange(1, 8),
            "cache_creation_input_tokens": created,
            "cache_read_input_tokens": rng.randrange(10_000, 90_000),
            "output_tokens": rng.randrange(20, 3_000),
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": "standard",
            "cache_creation": {
                "ephemeral_1h_input_tokens": created,
                "ephemeral_5m_input_tokens": 0,
            },
            "inference_geo": "",
            "speed": "standard",
        }

    def assistant(
        msg_id: str, request_id: str, block: dict[str, Any], stop: str | None, use: dict[str, Any]
    ) -> bytes:
        message = {
            "model": CLAUDE_MODEL,
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "content": [block],
            "stop_reason": stop,
            "stop_sequence": None,
            "stop_details": None,
            "usage": use,
            "diagnostics": None,
        }
        return envelope("assistant", clock.tick(), message=message, requestId=request_id)

    for turn in plan.turns:
        prompt_id = _uuid4(rng)
        if rng.random() < 0.3:
            yield _dumps(
                {
                    "type": "queue-operation",
                    "operation": "enqueue",
                    "timestamp": clock.tick(1, 5),
                    "sessionId": plan.session_id,
                    "content": turn.prompt,
                }
            )
            yield _dumps(
                {
                    "type": "queue-operation",
                    "operation": "dequeue",
                    "timestamp": clock.tick(1, 5),
                    "sessionId": plan.session_id,
                }
            )
        content: Any = turn.prompt
        if turn.prompt_image:
            content = [
                {
                    "type": "image",
                    "source": {
                        "type": "base64",
                        "media_type": "image/png",
                        "data": turn.prompt_image,
                    },
                },
                {"type": "text", "text": turn.prompt},
            ]
        prompt_at = clock.tick()
        yield envelope(
            "user",
            prompt_at,
            promptId=prompt_id,
            message={"role": "user", "content": content},
            permissionMode="acceptEdits",
        )
        yield _dumps(
            {
                "type": "file-history-snapshot",
                "messageId": parent,
                "snapshot": {"messageId": parent, "trackedFileBackups": {}, "timestamp": prompt_at},
                "isSnapshotUpdate": False,
            }
        )
        if rng.random() < 0.4:
            yield envelope(
                "attachment",
                clock.tick(1, 5),
                attachment={
                    "type": "deferred_tools_delta",
                    "addedNames": ["AskUserQuestion", "CronCreate"],
                    "addedLines": ["AskUserQuestion", "CronCreate"],
                    "removedNames": [],
                },
            )
        messages = 0
        for text, tool in turn.steps:
            msg_id, request_id, use = "msg_01" + _b62(rng, 22), "req_011C" + _b62(rng, 20), usage()
            signature = writer.signature()
            yield assistant(
                msg_id,
                request_id,
                {"type": "thinking", "thinking": "", "signature": signature},
                "tool_use",
                use,
            )
            if text:
                yield assistant(msg_id, request_id, {"type": "text", "text": text}, "tool_use", use)
            messages += 2
            if tool is None:
                continue
            call_id = "toolu_01" + _b62(rng, 22)
            name, tool_input, result, structured, is_error = _claude_tool(tool, plan)
            call_uuid_before = None
            yield assistant(
                msg_id,
                request_id,
                {
                    "type": "tool_use",
                    "id": call_id,
                    "name": name,
                    "input": tool_input,
                    "caller": {"type": "direct"},
                },
                "tool_use",
                use,
            )
            call_uuid_before = parent
            block: dict[str, Any] = {
                "tool_use_id": call_id,
                "type": "tool_result",
                "content": result,
            }
            if is_error:
                block["is_error"] = True
            elif name == "Bash":
                block["is_error"] = False
            yield envelope(
                "user",
                clock.tick(50, 9_000),
                promptId=prompt_id,
                message={"role": "user", "content": [block]},
                toolUseResult=structured,
                sourceToolAssistantUUID=call_uuid_before,
            )
        msg_id, request_id = "msg_01" + _b62(rng, 22), "req_011C" + _b62(rng, 20)
        yield assistant(
            msg_id, request_id, {"type": "text", "text": turn.final}, "end_turn", usage()
        )
        yield envelope(
            "system",
            clock.tick(1, 30),
            subtype="turn_duration",
            durationMs=clock.ms - plan.start_ms,
            messageCount=messages + 2,
            isMeta=False,
        )
        yield _dumps(
            {
                "type": "last-prompt",
                "lastPrompt": turn.prompt[:200],
                "leafUuid": parent,
                "sessionId": plan.session_id,
            }
        )
        clock.tick(20_000, 600_000)


def _claude_tool(tool: _Tool, plan: _SessionPlan) -> tuple[str, dict[str, Any], Any, Any, bool]:
    """(tool name, input, tool_result content, toolUseResult, is_error)"""
    abs_path = f"{plan.cwd}/{tool.path}"
    if tool.kind in ("shell", "commit"):
        tool_input: dict[str, Any] = {
            "command": tool.command,
            "description": tool.command.split(" ", 1)[0],
        }
        if tool.exit_code != 0:
            text = f"Exit code {tool.exit_code}\n{tool.output}"
            return "Bash", tool_input, text, f"Error: {text}", True
        structured = {
            "stdout": tool.output,
            "stderr": "",
            "interrupted": False,
            "isImage": False,
            "noOutputExpected": False,
        }
        return "Bash", tool_input, tool.output, structured, False
    if tool.kind == "read":
        lines = tool.content.splitlines()
        numbered = "\n".join(f"{n}\t{line}" for n, line in enumerate(lines, 1))
        structured = {
            "type": "text",
            "file": {
                "filePath": abs_path,
                "content": tool.content,
                "numLines": len(lines),
                "startLine": 1,
                "totalLines": len(lines),
            },
        }
        return "Read", {"file_path": abs_path}, numbered, structured, False
    if tool.kind == "edit":
        tool_input = {
            "replace_all": False,
            "file_path": abs_path,
            "old_string": tool.old,
            "new_string": tool.new,
        }
        structured = {
            "filePath": abs_path,
            "oldString": tool.old,
            "newString": tool.new,
            "originalFile": None,
            "structuredPatch": [
                {
                    "oldStart": 4,
                    "oldLines": tool.old.count("\n") + 1,
                    "newStart": 4,
                    "newLines": tool.new.count("\n") + 1,
                    "lines": ["-" + tool.old.split("\n", 1)[0], "+" + tool.new.split("\n", 1)[0]],
                }
            ],
            "userModified": False,
            "replaceAll": False,
        }
        return (
            "Edit",
            tool_input,
            f"The file {abs_path} has been updated successfully.",
            structured,
            False,
        )
    if tool.kind == "write":
        structured = {
            "type": "create",
            "filePath": abs_path,
            "content": tool.content,
            "structuredPatch": [],
            "originalFile": None,
            "userModified": False,
        }
        return (
            "Write",
            {"file_path": abs_path, "content": tool.content},
            f"File created successfully at: {abs_path}",
            structured,
            False,
        )
    # an image read back by the Read tool
    content = [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": tool.image},
        }
    ]
    structured = {
        "type": "image",
        "file": {
            "base64": tool.image,
            "type": "image/png",
            "originalSize": len(tool.image) * 3 // 4,
        },
    }
    return "Read", {"file_path": abs_path}, content, structured, False


# --------------------------------------------------------------------------------------------
# corpus


@dataclass
class CorpusStats:
    root: Path
    files: int = 0
    sessions: int = 0
    turns: int = 0
    bytes: int = 0
    codex_files: int = 0
    codex_bytes: int = 0
    claude_files: int = 0
    claude_bytes: int = 0
    paths: list[Path] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "root": str(self.root),
            "files": self.files,
            "sessions": self.sessions,
            "turns": self.turns,
            "bytes": self.bytes,
            "codexFiles": self.codex_files,
            "codexBytes": self.codex_bytes,
            "claudeFiles": self.claude_files,
            "claudeBytes": self.claude_bytes,
        }


def source_roots(root: Path) -> dict[str, Path]:
    """The provider roots of a generated corpus (what `teamlore sync --source` would get)."""
    return {"codex": root / "codex" / "sessions", "claude": root / "claude" / "projects"}


_PROJECTS = (
    "api-gateway",
    "billing-service",
    "web-dashboard",
    "teamlore",
    "data-pipeline",
    "mobile-app",
    "infra",
    "docs-site",
    "search-engine",
    "auth-service",
    "cli-tools",
    "ml-training",
)


def generate(
    root: Path,
    *,
    seed: int = 1,
    mib: float | None = None,
    turns: int | None = None,
    profile: Profile = "full",
    turns_per_session: tuple[int, int] | None = None,
    codex_share: float = 0.5,
) -> CorpusStats:
    """Write a corpus under `root` until it holds `mib` MiB of JSONL or `turns` user turns."""
    if (mib is None) == (turns is None):
        raise ValueError("give exactly one of mib and turns")
    writer = _Writer(seed, profile)
    rng = writer.rng
    target_bytes = int(mib * (1 << 20)) if mib is not None else None
    low, high = turns_per_session or ((4, 40) if profile == "full" else (8, 32))
    stats = CorpusStats(root)
    clock_ms = BASE_EPOCH_MS
    users = [f"/home/dev{n}" for n in range(4)]
    while True:
        if target_bytes is not None and stats.bytes >= target_bytes:
            break
        if turns is not None and stats.turns >= turns:
            break
        count = rng.randint(low, high)
        if turns is not None:
            count = min(count, turns - stats.turns)
        provider: Literal["codex", "claude"] = "codex" if rng.random() < codex_share else "claude"
        if stats.sessions < 2 and 0 < codex_share < 1:
            provider = ("codex", "claude")[stats.sessions]  # both providers in any corpus
        clock_ms += rng.randrange(60_000, 6 * 3_600_000)
        cwd = f"{rng.choice(users)}/src/{rng.choice(_PROJECTS)}"
        branch = rng.choice(("main", "main", "main", "fix/flaky-sync", "feature/cjk-search"))
        featured = stats.sessions < 2 and profile == "full"
        plan = _SessionPlan(
            provider,
            "",
            cwd,
            branch,
            clock_ms,
            [writer.turn(n if featured else None) for n in range(count)],
        )
        if provider == "codex":
            plan.session_id = _uuid7(rng, clock_ms)
            local = time.gmtime(clock_ms // 1000)
            folder = root / "codex" / "sessions" / time.strftime("%Y/%m/%d", local)
            path = (
                folder
                / f"rollout-{time.strftime('%Y-%m-%dT%H-%M-%S', local)}-{plan.session_id}.jsonl"
            )
            records = codex_records(plan, writer)
        else:
            plan.session_id = _uuid4(rng)
            folder = root / "claude" / "projects" / encode_cwd(cwd)
            path = folder / f"{plan.session_id}.jsonl"
            records = claude_records(plan, writer)
        folder.mkdir(parents=True, exist_ok=True)
        data = b"\n".join(records) + b"\n"
        path.write_bytes(data)
        stats.files += 1
        stats.sessions += 1
        stats.turns += count
        stats.bytes += len(data)
        stats.paths.append(path)
        if provider == "codex":
            stats.codex_files += 1
            stats.codex_bytes += len(data)
        else:
            stats.claude_files += 1
            stats.claude_bytes += len(data)
    return stats


def generate_small_files(root: Path, count: int, *, seed: int = 1) -> CorpusStats:
    """`count` small session files (one or two short turns each), half per provider."""
    stats = generate(root, seed=seed, turns=count, profile="lean", turns_per_session=(1, 1))
    return stats


# --------------------------------------------------------------------------------------------
# appending a turn to an existing file (the append-to-searchable benchmark)


def append_turn(path: Path, token: str, *, at_ms: int) -> int:
    """Append one complete, sealed turn mentioning `token` to the session file `path`, shaped
    like the provider's own records. Returns the number of bytes appended."""
    with open(path, "rb") as handle:
        first = orjson.loads(handle.readline())
    prompt = f"Please look at {token} again and check the `sync_index` path."
    answer = f"Checked {token}: the index path is fine now."
    if first.get("type") == "session_meta":
        turn_id = str(uuid.UUID(int=at_ms << 64 | 0x1234, version=4))
        lines: list[dict[str, Any]] = [
            {
                "timestamp": _iso(at_ms),
                "type": "event_msg",
                "payload": {
                    "type": "task_started",
                    "turn_id": turn_id,
                    "started_at": at_ms // 1000,
                    "model_context_window": 258400,
                    "collaboration_mode_kind": "default",
                },
            },
            {
                "timestamp": _iso(at_ms + 1),
                "type": "event_msg",
                "payload": {
                    "type": "user_message",
                    "message": prompt,
                    "images": [],
                    "local_images": [],
                    "text_elements": [],
                },
            },
            {
                "timestamp": _iso(at_ms + 2),
                "type": "event_msg",
                "payload": {
                    "type": "agent_message",
                    "message": answer,
                    "phase": "final_answer",
                    "memory_citation": None,
                },
            },
            {
                "timestamp": _iso(at_ms + 2),
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": answer}],
                    "phase": "final_answer",
                },
            },
            {
                "timestamp": _iso(at_ms + 3),
                "type": "event_msg",
                "payload": {
                    "type": "task_complete",
                    "turn_id": turn_id,
                    "last_agent_message": answer,
                    "completed_at": at_ms // 1000,
                    "duration_ms": 3,
                    "time_to_first_token_ms": 1,
                },
            },
        ]
    else:
        with open(path, "rb") as handle:
            envelope = next(r for r in map(orjson.loads, handle) if r.get("type") == "user")
        base = {
            k: envelope[k]
            for k in ("userType", "entrypoint", "cwd", "sessionId", "version", "gitBranch")
            if k in envelope
        }
        ids = [str(uuid.UUID(int=at_ms << 64 | n, version=4)) for n in range(3)]
        lines = [
            {
                "parentUuid": None,
                "isSidechain": False,
                "type": "user",
                "message": {"role": "user", "content": prompt},
                "uuid": ids[0],
                "timestamp": _iso(at_ms),
                **base,
            },
            {
                "parentUuid": ids[0],
                "isSidechain": False,
                "type": "assistant",
                "message": {
                    "model": CLAUDE_MODEL,
                    "id": f"msg_01append{at_ms}",
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "text", "text": answer}],
                    "stop_reason": "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": 1, "output_tokens": 9},
                },
                "uuid": ids[1],
                "timestamp": _iso(at_ms + 1),
                **base,
            },
            {
                "parentUuid": ids[1],
                "isSidechain": False,
                "type": "system",
                "subtype": "turn_duration",
                "durationMs": 2,
                "messageCount": 2,
                "isMeta": False,
                "uuid": ids[2],
                "timestamp": _iso(at_ms + 2),
                **base,
            },
        ]
    data = b"".join(orjson.dumps(line) + b"\n" for line in lines)
    with open(path, "ab") as handle:
        handle.write(data)
    return len(data)


# --------------------------------------------------------------------------------------------
# search queries that fit the vocabulary


def search_queries(count: int = 200, *, seed: int = 1) -> list[tuple[str, str]]:
    """(kind, query) pairs: English words and pairs, identifiers of every form, file names,
    Chinese of one, two and more characters, mixed, and some that match nothing."""
    rng = random.Random(f"queries-{seed}")
    pools = _build_pools(random.Random(f"pools-{seed}"))
    content_words = [w for w in _WORDS if len(w) > 3]
    hanzi = sorted({ch for phrase in _CHINESE_PHRASES for ch in phrase})
    kinds = ("word", "pair", "ident", "ident", "path", "zh1", "zh2", "zh-long", "mixed", "none")
    out: list[tuple[str, str]] = []
    while len(out) < count:
        kind = kinds[len(out) % len(kinds)]
        if kind == "word":
            text = rng.choice(content_words)
        elif kind == "pair":
            text = f"{rng.choice(content_words)} {rng.choice(content_words)}"
        elif kind == "ident":
            text = rng.choice(pools.identifiers)
        elif kind == "path":
            text = rng.choice(pools.paths).rsplit("/", 1)[-1]
        elif kind == "zh1":
            text = rng.choice(hanzi)
        elif kind == "zh2":
            phrase = rng.choice(_CHINESE_PHRASES)
            start = rng.randrange(len(phrase) - 1)
            text = phrase[start : start + 2]
        elif kind == "zh-long":
            text = rng.choice(_CHINESE_PHRASES)
        elif kind == "mixed":
            text = f"{rng.choice(_CHINESE_PHRASES)} {rng.choice(content_words)}"
        else:
            text = f"nonexistent{rng.randrange(10**6)}"
        out.append((kind, text))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=1)
    size = parser.add_mutually_exclusive_group(required=True)
    size.add_argument("--mib", type=float)
    size.add_argument("--turns", type=int)
    parser.add_argument("--profile", choices=("full", "lean"), default="full")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    stats = generate(args.out, seed=args.seed, mib=args.mib, turns=args.turns, profile=args.profile)
    elapsed = time.perf_counter() - started
    sys.stdout.write(
        orjson.dumps(
            {**stats.to_json(), "seconds": round(elapsed, 2)}, option=orjson.OPT_INDENT_2
        ).decode()
        + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
