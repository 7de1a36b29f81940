/**
 * Saves a fetched body as a file. The response is read as a Blob and handed to the browser
 * through an object URL and a download link, so the session cookie and CSRF token travel with
 * the API call (fetch), never in a URL.
 */
export async function saveResponse(res: Response, fallbackName: string): Promise<void> {
  const disposition = res.headers.get('content-disposition') ?? '';
  const name = /filename="?([^";]+)"?/.exec(disposition)?.[1] ?? fallbackName;
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
