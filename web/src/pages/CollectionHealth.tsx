import { useParams } from 'react-router';
import { CollectionNav } from '../components/CollectionNav.tsx';
import { ReportContradictions } from '../components/ReportContradictions.tsx';
import { ReportDigest } from '../components/ReportDigest.tsx';
import { ReportHealth } from '../components/ReportHealth.tsx';
import { ReportRetractions } from '../components/ReportRetractions.tsx';

/** A collection's health and reports: counts, pipeline, contradictions, retractions, summary and profile; each part loads on its own. */
export function CollectionHealth() {
  const { name = '' } = useParams();
  return (
    <>
      <CollectionNav name={name} />
      <ReportHealth collection={name} />
      <ReportContradictions collection={name} />
      <ReportRetractions collection={name} />
      <ReportDigest collection={name} />
    </>
  );
}
