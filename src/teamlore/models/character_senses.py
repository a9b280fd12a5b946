"""Developer senses of single characters and of Chinese function words, put before
CC-CEDICT's own as the words of `models/developer_glosses.py` are (docs/hybrid-search.md,
"Chinese queries").

A character the cut leaves standing alone (修 in 修一下, 子 in 子进程退出了) is read by
its first CC-CEDICT sense, which is often not the one a developer means: 修 "decorate", 版 "a
register", 子 "son", 圈 "confine". The characters below get the sense software gives them.

The function words CC-CEDICT lacks (一个, 哪种, 能不能, 要不要, 的时候), or reads with a
content sense (几 "small table", 中的 "hit the target", 当 "dong", 才 "ability"), are listed
with senses of English function words only, so the cut finds them, `glosses.is_function_word`
drops them and no English word translates to them.

Each line: the forms, "=", the English sense.
"""

from __future__ import annotations

CHARACTER_SENSES = """
类 類 = class
库 庫 = library
总 總 = total
列 = column
包 = package
云 = cloud
机 機 = machine
条 條 = item; entry; strip
项 項 = item
轮 輪 = round; turn; wheel
单 單 = single; list; form
表 = table; form; list
批 = batch
读 讀 = read
选 選 = select; choose
回 = back; return; reply
层 層 = layer
修 = fix; repair
版 = version; edition
子 = child; sub
段 = section; segment
补 補 = add; patch
拆 = split; take apart
验 驗 = verify; check
转 轉 = convert; turn; forward
拒 = reject; refuse
逐 = one by one
次 = time; times
圈 = ring; circle; loop
崩 = crash; collapse
炸 = explode; blow up; crash
拦 攔 = block; stop
缺 = missing; lack
跑 = run
池 = pool
存 = store; save
份 = copy; portion
组 組 = group
队 隊 = queue; team
测 測 = test; measure
仓 倉 = repository; warehouse
档 檔 = file; record
种 種 = kind; type
带 帶 = carry; band
话 話 = words; speech
盘 盤 = disk; plate
码 碼 = code; number
主 = main; primary
审 審 = review
待 = wait; pending
态 態 = state
查 = check; look up
节 節 = section; node
源 = source
含 = contain; include
被 = by
时 時 = when
后 後 = after
一个 一個 = a; an
中的 = in; of
当 當 = when; as
才 = then; just
若 = if
第 = the
至 = to; until
仅 僅 = only
均 = all; each
的时候 的時候 = when
还有 還有 = also; and
几 幾 = a few; how many
哪种 哪種 = which
能不能 = can
要不要 = should
"""
