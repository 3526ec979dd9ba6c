-- SPDX-License-Identifier: Apache-2.0
-- testutil.lua — what the headless Neovim test scripts share: one line per step on
-- stdout, and a failure that prints FAIL and exits non-zero. Loaded with
--   local u = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/testutil.lua')
local M = {}

function M.out(line)
  io.stdout:write(line .. '\n')
  io.stdout:flush()
end

function M.fail(message)
  M.out('FAIL ' .. message)
  vim.cmd('cquit 1')
end

-- Runs the test's body: a Lua error fails the test with its message.
function M.main(run)
  local ok, message = pcall(run)
  if not ok then
    M.fail('error: ' .. tostring(message))
  end
end

return M
