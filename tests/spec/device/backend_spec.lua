-- The backend tables' coverage of the primitive ops (TIDE_OPF_PRIMITIVE, the
-- ones every backend must implement): the CPU's has them all; CUDA's missing
-- ones are listed, not failed (its kernels are still few), and must agree
-- with its per-op table. Needs the CUDA library, not a GPU.
local binding = require "tide.binding"
local ffi, C = binding.ffi, binding.C
local bit = require "bit"

local function is_primitive(op) return bit.band(C.tide_op_flags(op), C.TIDE_OPF_PRIMITIVE) ~= 0 end

describe("backend primitives", function()
  it("the CPU backend implements every op", function()
    for op = 0, C.TIDE_NUM_OPS - 1 do assert.is_true(C.tide_op_has_kernel(C.TIDE_CPU, op), ffi.string(C.tide_op_name(op))) end
    assert.are.equal(0, C.tide_backend_missing_primitives(C.TIDE_CPU, nil, 0))
  end)

  it("lists the primitives the CUDA backend lacks", function()
    local ops = ffi.new("int[?]", C.TIDE_NUM_OPS)
    local n = C.tide_backend_missing_primitives(C.TIDE_CUDA, ops, C.TIDE_NUM_OPS)
    if n < 0 then -- built without CUDA (make CUDA=0), or the library did not load
      assert.matches("backend of cuda:0", ffi.string(C.tide_last_error()), 1, true)
      print("no CUDA backend: its missing primitives are not listed")
      return
    end
    local names, k, total = {}, 0, 0
    for op = 0, C.TIDE_NUM_OPS - 1 do
      if is_primitive(op) then
        total = total + 1
        if not C.tide_op_has_cuda_kernel(op) then -- listed, in op order
          assert.are.equal(op, ops[k], ffi.string(C.tide_op_name(op)))
          k = k + 1
          names[#names + 1] = ffi.string(C.tide_op_name(op))
        end
      end
    end
    assert.are.equal(k, n)
    print(string.format("the CUDA backend lacks %d of %d primitives: %s", n, total, table.concat(names, ", ")))
  end)
end)
