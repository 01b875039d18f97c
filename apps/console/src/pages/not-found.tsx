export function NotFoundPage({ what = 'page' }: { what?: string }) {
  return (
    <section aria-labelledby="nf-title" class="notfound">
      <h1 id="nf-title">Not found</h1>
      <p>
        This {what} does not exist, or it is not yours. <a href="#/sessions">Back to your sessions</a>
      </p>
    </section>
  );
}
