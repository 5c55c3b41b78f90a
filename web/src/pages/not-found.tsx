import { Empty, PageHeader } from '../components/ui.tsx';

export function NotFoundPage() {
  return (
    <section>
      <PageHeader title="Not found" />
      <Empty>
        Nothing lives at this address. <a href="/ui/runs">See the runs</a>.
      </Empty>
    </section>
  );
}
