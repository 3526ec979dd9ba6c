-- SPDX-License-Identifier: Apache-2.0
-- stagd_lens.lua — the Neovim configuration of docs/editors.md, used as a user would:
-- nvim.test.ts extracts it from the doc into init.lua (`nvim -u init.lua`), puts the
-- daemon on PATH as `stagd`, and runs this script, which opens a Python file (the
-- config's FileType autocommand starts and attaches the client), then runs
-- :StagdConvertedCode, :StagdGraph and vim.lsp.codelens.run() (the lens commands go
-- through workspace/executeCommand) and a lens that cannot stage, whose error must
-- come back as a notification and as a diagnostic on the failing line. Prints one line
-- per step; exits non-zero on failure.

local u = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/testutil.lua')
local out, fail = u.out, u.fail

local SOURCE = {
  'def f(x):', --            0
  '    y = x * 2', --        1
  '    return y + 1', --     2
  '', --                     3
  'def boom(x):', --         4
  '    return len(x, 3)', -- 5
}

-- The scratch buffer stagd_show opened last: waits for a new window; its lines.
local function wait_new_window(before)
  local win = nil
  if not vim.wait(20000, function()
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      if not before[w] then
        win = w
      end
    end
    return win ~= nil
  end, 20) then
    return nil
  end
  local buf = vim.api.nvim_win_get_buf(win)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local result = { lines = table.concat(lines, '\n'), filetype = vim.bo[buf].filetype, buftype = vim.bo[buf].buftype }
  vim.api.nvim_win_close(win, true)
  return result
end

local function windows()
  local set = {}
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    set[w] = true
  end
  return set
end

local function run()
  local notes = {}
  vim.notify = function(msg, level)
    table.insert(notes, { msg = msg, level = level })
  end

  local path = vim.fn.tempname() .. '.py'
  vim.fn.writefile(SOURCE, path)
  vim.cmd('edit ' .. path)
  local buf = vim.api.nvim_get_current_buf()
  if vim.bo[buf].filetype ~= 'python' then
    return fail('filetype is ' .. vim.bo[buf].filetype)
  end
  local client = nil
  if not vim.wait(10000, function()
    client = vim.lsp.get_active_clients()[1]
    return client ~= nil and client.initialized
  end, 10) then
    return fail('the configuration did not start stagd (is it on PATH?)')
  end
  out('client ' .. client.name .. ' attached ' .. tostring(vim.lsp.buf_is_attached(buf, client.id)))
  local cmds = client.server_capabilities.executeCommandProvider.commands
  out('executeCommandProvider ' .. table.concat(cmds, ' '))

  -- :StagdConvertedCode with the cursor in f's body
  vim.api.nvim_win_set_cursor(0, { 3, 4 })
  local before = windows()
  vim.cmd('StagdConvertedCode')
  local shown = wait_new_window(before)
  if not shown then
    return fail(':StagdConvertedCode opened no window; notes: ' .. vim.inspect(notes))
  end
  out('StagdConvertedCode ' .. shown.filetype .. ' ' .. shown.buftype .. ' ' ..
      tostring(shown.lines:find('def f(x):', 1, true) ~= nil))

  before = windows()
  vim.cmd('StagdGraph')
  shown = wait_new_window(before)
  if not shown then
    return fail(':StagdGraph opened no window; notes: ' .. vim.inspect(notes))
  end
  out('StagdGraph ' .. shown.filetype .. ' ' .. tostring(shown.lines:match('graph @f%(') ~= nil))

  -- the lenses, as virtual text, then vim.lsp.codelens.run() on f's line
  vim.lsp.codelens.refresh()
  if not vim.wait(10000, function() return #vim.lsp.codelens.get(buf) > 0 end, 20) then
    return fail('no code lenses after refresh')
  end
  out('lenses ' .. #vim.lsp.codelens.get(buf))
  vim.ui.select = function(items, _, on_choice)
    for _, item in ipairs(items) do
      if item.lens.command.title == 'Show graph' then
        return on_choice(item)
      end
    end
    on_choice(nil)
  end
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  before = windows()
  vim.lsp.codelens.run()
  shown = wait_new_window(before)
  if not shown then
    return fail('vim.lsp.codelens.run() opened no window; notes: ' .. vim.inspect(notes))
  end
  out('codelens.run ' .. tostring(shown.lines:match('graph @f%(') ~= nil))

  -- a function that cannot stage: an error notification and a diagnostic in place
  vim.api.nvim_win_set_cursor(0, { 6, 4 })
  vim.cmd('StagdGraph')
  local diag = nil
  if not vim.wait(20000, function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.code == 'staging-error' then
        diag = d
      end
    end
    return diag ~= nil
  end, 20) then
    return fail('no staging-error diagnostic; notes: ' .. vim.inspect(notes))
  end
  out('diagnostic ' .. diag.code .. ' line ' .. diag.lnum .. ' ' .. tostring(diag.message:match('staging boom failed') ~= nil))
  -- the reply (shown as a notification) may come after the diagnostic: the daemon
  -- publishes a staging error before it answers the request
  local error_note = vim.wait(20000, function()
    for _, n in ipairs(notes) do
      if n.level == vim.log.levels.ERROR and n.msg:match('^stagd: .*staging boom failed') then
        return true
      end
    end
    return false
  end, 20)
  out('notified ' .. tostring(error_note))
  out('OK')
  vim.cmd('qall!')
end

u.main(run)
