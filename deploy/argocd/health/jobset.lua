-- Argo CD health check for jobset.x-k8s.io/JobSet (docs/user/argocd-health.md).
-- A JobSet is a run, not a service: Healthy only once it has Completed,
-- Degraded once it has Failed, Suspended while spec.suspend holds it (a
-- Kueue queue, or a user), Progressing otherwise (starting or running).
local hs = {}

local function condition(conditions, type)
  for _, c in ipairs(conditions or {}) do
    if c.type == type and c.status == "True" then
      return c
    end
  end
  return nil
end

-- counts sums the Jobs of every replicatedJob by state.
local function counts(status)
  local n = {ready = 0, active = 0, succeeded = 0, failed = 0, suspended = 0}
  for _, rj in ipairs(status.replicatedJobsStatus or {}) do
    for k, _ in pairs(n) do
      n[k] = n[k] + (rj[k] or 0)
    end
  end
  return n
end

local status = obj.status or {}
local spec = obj.spec or {}

local failed = condition(status.conditions, "Failed")
if failed ~= nil then
  hs.status = "Degraded"
  hs.message = "Failed: " .. (failed.reason or "") .. ": " .. (failed.message or "")
  return hs
end

local completed = condition(status.conditions, "Completed")
if completed ~= nil then
  hs.status = "Healthy"
  hs.message = "Completed: " .. (completed.message or "")
  return hs
end

if spec.suspend == true then
  hs.status = "Suspended"
  local labels = (obj.metadata or {}).labels or {}
  local queue = labels["kueue.x-k8s.io/queue-name"]
  if queue ~= nil then
    hs.message = "Suspended: waiting in the Kueue LocalQueue " .. queue
  else
    hs.message = "Suspended: spec.suspend is true"
  end
  return hs
end

local n = counts(status)
hs.status = "Progressing"
-- Only the base and table libraries are loaded (no string.format).
hs.message = "Running: " .. tostring(n.ready) .. " Jobs ready, " .. tostring(n.active) ..
  " active, " .. tostring(n.succeeded) .. " succeeded"
if (status.restarts or 0) > 0 then
  hs.message = hs.message .. ", " .. tostring(status.restarts) .. " restarts"
end
return hs
