/** A sandbox tenant on the real companion, set up the way its admin would (over loopback HTTP). */

export async function signUp(companionUrl: string, email: string): Promise<string> {
  const res = await fetch(`${companionUrl}/signup/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email }),
  });
  if (res.status !== 201) throw new Error(`signup: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { api_key: string }).api_key;
}

/** PUT /tenant/policy: the tenant's allow list and hard denies for one pack. */
export async function putPolicy(
  companionUrl: string,
  apiKey: string,
  pack: string,
  policy: { allow_action_types?: string[]; deny_action_types?: string[] },
): Promise<void> {
  const res = await fetch(`${companionUrl}/tenant/policy?policy_pack=${pack}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', 'x-service-key': apiKey },
    body: JSON.stringify({ policy_pack: pack, ...policy }),
  });
  if (res.status !== 201 && res.status !== 200) throw new Error(`PUT /tenant/policy: ${res.status} ${await res.text()}`);
}

export async function getJson(companionUrl: string, apiKey: string, path: string): Promise<any> {
  const res = await fetch(`${companionUrl}${path}`, { headers: { 'x-service-key': apiKey } });
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}
