-- SPDX-License-Identifier: Apache-2.0
-- stagd_version.lua — drives `stagd --lsp --stdio` with Neovim's built-in LSP
-- client (headless; written for Neovim 0.7, the Debian 12 version, and later):
-- starts the client, waits for initialization, sends stagd/version and an
-- unknown method with request_sync, stops the client and checks the daemon's
-- exit status. Prints one line per step on stdout; exits non-zero on failure.
--
-- Run: STAGD_BIN=/path/to/stagd nvim --headless -u NONE -c "luafile stagd_version.lua"

local u = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/testutil.lua')
local out, fail = u.out, u.fail

local function run()
  local bin = os.getenv('STAGD_BIN')
  if bin == nil or bin == '' then
    return fail('STAGD_BIN is not set')
  end
  if vim.fn.executable(bin) ~= 1 then
    return fail('STAGD_BIN=' .. bin .. ' is not executable')
  end

  local init_result = nil
  local exit_code, exit_signal = nil, nil
  local client_id = vim.lsp.start_client({
    name = 'stagd',
    cmd = { bin, '--lsp', '--stdio' },
    root_dir = vim.fn.getcwd(),
    on_init = function(_, result)
      init_result = result
    end,
    on_exit = function(code, signal)
      exit_code, exit_signal = code, signal
    end,
  })
  if client_id == nil then
    return fail('vim.lsp.start_client returned nil')
  end

  if not vim.wait(10000, function() return init_result ~= nil or exit_code ~= nil end, 10) or init_result == nil then
    return fail('no initialize result (exit code ' .. tostring(exit_code) .. ')')
  end
  local info = init_result.serverInfo or {}
  out('initialized ' .. tostring(info.name) .. ' ' .. tostring(info.version))

  local client = vim.lsp.get_client_by_id(client_id)
  local response, err = client.request_sync('stagd/version', vim.empty_dict(), 5000, 0)
  if response == nil then
    return fail('stagd/version: ' .. tostring(err))
  end
  if response.err ~= nil then
    return fail('stagd/version error: ' .. vim.fn.json_encode(response.err))
  end
  out('stagd/version ' .. vim.fn.json_encode(response.result))

  response, err = client.request_sync('stagd/noSuchMethod', vim.empty_dict(), 5000, 0)
  if response == nil or response.err == nil then
    return fail('stagd/noSuchMethod did not fail: ' .. tostring(err))
  end
  out('stagd/noSuchMethod error ' .. tostring(response.err.code))

  client.stop() -- shutdown, then exit
  if not vim.wait(10000, function() return exit_code ~= nil end, 10) then
    return fail('stagd did not exit after shutdown/exit')
  end
  out('exit ' .. tostring(exit_code) .. ' signal ' .. tostring(exit_signal))
  if exit_code ~= 0 then
    return fail('stagd exit status ' .. tostring(exit_code))
  end
  out('OK')
  vim.cmd('qall!')
end

u.main(run)
